import { equalBytes } from '@ward/shared/bytes';
import { MetadataMismatchError, WalCorruptError } from './errors';
import type { Decoded, WalEntry, WalHardState, WalSnapshotMarker } from './record';
import { RecordType, decodeEntry, decodeHardState, decodeSnapshotMarker } from './record';

/** What replaying the log yields. */
export interface WalReplayState {
  /** The metadata the log was created with. */
  readonly metadata: Uint8Array;
  /** The last hard state written, if any. */
  readonly hardState: WalHardState | undefined;
  /**
   * The log after overwrites: contiguous entries, later writes at an index replacing the earlier
   * suffix from there (Raft truncates conflicting entries this way).
   */
  readonly entries: readonly WalEntry[];
  /** Every snapshot marker found, in log order. */
  readonly snapshots: readonly WalSnapshotMarker[];
  /**
   * Index after which the retained log is known to start: set by a marker that restarts the log
   * (an installed snapshot). Undefined when the log starts wherever its first entry is.
   */
  readonly baseIndex: number | undefined;
}

/** Rebuilds {@link WalReplayState} from records in log order. */
export class WalReplay {
  private metadata: Uint8Array | undefined;
  private hardState: WalHardState | undefined;
  private entries: WalEntry[] = [];
  private readonly snapshots: WalSnapshotMarker[] = [];
  private baseIndex: number | undefined;
  private expectedMetadata: Uint8Array | undefined;

  /** `expectedMetadata`: when given, the log must have been created with exactly these bytes. */
  constructor(expectedMetadata?: Uint8Array) {
    this.expectedMetadata = expectedMetadata;
  }

  /**
   * Applies one record; `positionInSegment` counts records after the segment's checksum record.
   * `copyEntries` false: an entry's data stays a view of `payload` (see readWal).
   */
  apply(type: number, payload: Uint8Array, file: string, offset: number, positionInSegment: number, copyEntries = true): void {
    if (positionInSegment === 0 && type !== RecordType.Metadata) {
      throw new WalCorruptError(file, offset, 'segment header lacks its metadata record');
    }
    switch (type) {
      case RecordType.Metadata:
        return this.applyMetadata(payload, file, offset, positionInSegment);
      case RecordType.Entry:
        return this.applyEntry(decoded(decodeEntry(payload, copyEntries), file, offset), file, offset);
      case RecordType.HardState:
        this.hardState = decoded(decodeHardState(payload), file, offset);
        return;
      case RecordType.Snapshot:
        return this.applySnapshot(decoded(decodeSnapshotMarker(payload), file, offset));
      case RecordType.Crc:
        throw new WalCorruptError(file, offset, 'checksum record in the middle of a segment');
      default:
        throw new WalCorruptError(file, offset, `unknown record type ${type}`);
    }
  }

  /** The state so far. */
  state(): WalReplayState {
    if (this.metadata === undefined) throw new TypeError('WalReplay.state: no segment was replayed');
    return { metadata: this.metadata, hardState: this.hardState, entries: this.entries, snapshots: this.snapshots, baseIndex: this.baseIndex };
  }

  private applyMetadata(payload: Uint8Array, file: string, offset: number, positionInSegment: number): void {
    if (positionInSegment !== 0) throw new WalCorruptError(file, offset, 'metadata record outside a segment header');
    const reference = this.metadata ?? this.expectedMetadata;
    if (reference !== undefined && !equalBytes(reference, payload)) throw new MetadataMismatchError(file, offset);
    this.metadata ??= payload.slice();
  }

  private applyEntry(entry: WalEntry, file: string, offset: number): void {
    const entries = this.entries;
    if (entries.length === 0) {
      if (this.baseIndex !== undefined && entry.index !== this.baseIndex + 1) {
        throw new WalCorruptError(file, offset, `entry ${entry.index} does not follow the snapshot at ${this.baseIndex} that restarted the log`);
      }
      entries.push(entry);
      return;
    }
    const first = entries[0]!.index;
    const last = first + entries.length - 1;
    if (entry.index === last + 1) {
      entries.push(entry);
    } else if (entry.index > last + 1) {
      throw new WalCorruptError(file, offset, `entry ${entry.index} leaves a gap after entry ${last}`);
    } else if (entry.index >= first) {
      entries.length = entry.index - first;
      entries.push(entry);
    } else if (this.baseIndex !== undefined && entry.index <= this.baseIndex) {
      throw new WalCorruptError(file, offset, `entry ${entry.index} rewrites the log below the snapshot at ${this.baseIndex}`);
    } else {
      this.entries = [entry];
    }
  }

  private applySnapshot(marker: WalSnapshotMarker): void {
    this.snapshots.push(marker);
    if (marker.hardState !== undefined) this.hardState = marker.hardState;
    if (marker.restartsLog) {
      this.entries = [];
      this.baseIndex = marker.index;
    }
  }
}

function decoded<T>(result: Decoded<T>, file: string, offset: number): T {
  if (!result.ok) throw new WalCorruptError(file, offset, result.reason);
  return result.value;
}
