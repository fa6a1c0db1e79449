import { BinaryWriter, type BinarySink } from '@ward/shared/binary';
import { crc32c } from '@ward/shared/checksum';
import { MinHeap } from '@ward/shared/heap';
import { assert } from '@ward/shared/errors';
import { successorKey, type ByteString } from './byte-string';
import { KVCompactedError, KVFutureRevisionError } from './errors';
import type { KeyRecord } from './key-record';
import type { KeySpace } from './key-space';
import { NO_LEASE } from './types';

// etcd's HashKV, bit for bit: a CRC-32C (Castagnoli) over the name of bbolt's "key" bucket, then
// over every retained revision up to the requested one, in revision order, each as bbolt holds it:
// the revision key (8-byte big-endian main, '_', 8-byte big-endian sub, and 't' for a tombstone)
// followed by the protobuf mvccpb.KeyValue (key, create_revision, mod_revision, version, value,
// lease, zero fields left out; a tombstone holds its key alone). Revisions above the compaction
// revision all count. One at or below it counts only when it is the key's live revision at the
// hashed revision (etcd's kvindex.Keep(rev)); when no key has a live revision there, etcd skips
// nothing and hashes every such revision its database still holds, the key's newest at or below
// the compaction revision when it is a put (a tombstone ward keeps at that revision for Watch is
// gone from etcd's database). So ward and etcd, given the same requests, report the same hash.
//
// The work is split into steps so the caller can interleave it with serving: the keys are read in
// chunks (each chunk's records sorted by revision into a run), then the runs are merged through a
// heap while hashing. Records up to the requested revision never change (new changes are above
// it) except by compaction; a compaction during the task makes it start over, or fail when it
// compacted the requested revision away.

const BUCKET_NAME = 'key';

/** A sink keeping the running CRC-32C of what a BinaryWriter flushes into it. */
class Crc32cSink implements BinarySink {
  value = 0;

  write(chunk: Uint8Array): void {
    this.value = crc32c(chunk, this.value);
  }
}

/** A protobuf length-delimited field: tag, length, bytes. */
function bytesField(writer: BinaryWriter, tag: number, value: ByteString): void {
  writer.uint8(tag).uvarint(value.length).latin1(value);
}

/** A protobuf varint field, left out when zero (proto3). */
function varintField(writer: BinaryWriter, tag: number, value: number): void {
  if (value === 0) return;
  writer.uint8(tag).uvarint(value);
}

/** Writes bbolt's revision key and the mvccpb.KeyValue it holds for `record` of `key`. */
function writeRevision(writer: BinaryWriter, key: ByteString, record: KeyRecord): void {
  writer.uint64be(record.modRevision);
  writer.uint8(0x5f); // '_'
  writer.uint64be(record.subRevision);
  if (record.value === null) {
    writer.uint8(0x74); // 't': a tombstone, which holds its key alone
    bytesField(writer, 0x0a, key);
    return;
  }
  bytesField(writer, 0x0a, key);
  varintField(writer, 0x10, record.createRevision);
  varintField(writer, 0x18, record.modRevision);
  varintField(writer, 0x20, record.version);
  if (record.value.length > 0) bytesField(writer, 0x2a, record.value);
  if (record.lease !== NO_LEASE) {
    // int64 on the wire: a negative lease ID is its two's complement (ten bytes), as protobuf encodes it.
    writer.uint8(0x30).uvarint64(BigInt.asUintN(64, record.lease));
  }
}

/** One chunk of keys' retained records up to the revision, in revision order. */
interface Run {
  readonly keys: ByteString[];
  readonly records: KeyRecord[];
  /** At or below the compaction revision and not the key's live revision at the hashed one. */
  readonly unkept: boolean[];
  /** At or below the compaction revision and not in etcd's database (what compaction deleted there). */
  readonly compacted: boolean[];
  next: number;
}

const before = (a: KeyRecord, b: KeyRecord): boolean => a.modRevision < b.modRevision || (a.modRevision === b.modRevision && a.subRevision < b.subRevision);

export interface HashKvResult {
  readonly hash: number;
  /** The compaction revision the hash covers (-1: never compacted). */
  readonly compactRevision: number;
  /** The revision hashed up to. */
  readonly revision: number;
}

/** Keys read per collecting step unit, records hashed per merging step unit. */
export const HASH_KV_DEFAULT_STEP = 4096;

export class HashKvTask {
  readonly revision: number;
  private compactRevision: number;
  private sink = new Crc32cSink();
  private writer = new BinaryWriter({ sink: this.sink });
  private cursor: ByteString | null = '';
  private runs: Run[] = [];
  /** Indexes into `runs`, by each run's next record. */
  private heap = this.newHeap([]);
  private merging = false;
  /** Keys with a live revision at the hashed revision (etcd's Keep map is empty without any). */
  private keptCount = 0;
  private finished: HashKvResult | undefined;

  /**
   * etcd's HashByRev checks: `revision` ≤ 0 means the current revision; at or below the
   * compaction revision → compacted; above the current revision → future revision.
   */
  constructor(private readonly space: KeySpace, revision: number) {
    assert(Number.isSafeInteger(revision), 'hash-kv: the revision must be a safe integer');
    if (revision > 0 && revision <= space.compactRevision) throw new KVCompactedError(revision, space.compactRevision);
    if (revision > space.currentRevision) throw new KVFutureRevisionError(revision, space.currentRevision);
    this.revision = revision > 0 ? revision : space.currentRevision;
    this.compactRevision = space.compactRevision;
    this.restart();
  }

  /** The hash, once `step` has returned true. */
  get result(): HashKvResult {
    assert(this.finished !== undefined, 'hash-kv: not finished');
    return this.finished;
  }

  /**
   * Does about `budget` units of work (keys read, or records hashed); true when finished. Throws
   * KVCompactedError when a compaction since the start removed the revision being hashed.
   */
  step(budget: number = HASH_KV_DEFAULT_STEP): boolean {
    assert(Number.isSafeInteger(budget) && budget > 0, 'hash-kv: the step budget must be a positive integer');
    if (this.finished !== undefined) return true;
    if (this.space.compactRevision !== this.compactRevision) {
      if (this.revision <= this.space.compactRevision) throw new KVCompactedError(this.revision, this.space.compactRevision);
      this.compactRevision = this.space.compactRevision;
      this.restart();
    }
    if (!this.merging) this.collect(budget);
    else this.merge(budget);
    return this.finished !== undefined;
  }

  /** Runs every step at once (small stores, tests). */
  run(): HashKvResult {
    while (!this.step(1 << 20));
    return this.result;
  }

  private restart(): void {
    this.sink = new Crc32cSink();
    this.writer = new BinaryWriter({ sink: this.sink });
    this.writer.latin1(BUCKET_NAME);
    this.cursor = '';
    this.runs = [];
    this.heap = this.newHeap([]);
    this.merging = false;
    this.keptCount = 0;
  }

  /** Reads up to `budget` keys from the cursor; their retained records up to the revision become a run. */
  private collect(budget: number): void {
    const entries: Array<{ key: ByteString; record: KeyRecord; unkept: boolean; compacted: boolean }> = [];
    let visited = 0;
    let last: ByteString | null = null;
    this.space.index.scan(this.cursor!, null, (key, latest) => {
      if (visited === budget) return false;
      visited++;
      last = key;
      let kept: KeyRecord | null | undefined;
      let inDatabase: KeyRecord | null | undefined;
      for (let record: KeyRecord | null = latest; record !== null; record = record.prev) {
        if (record.modRevision > this.revision) continue;
        // The newest record at or below the hashed revision is the key's live one unless a tombstone.
        if (kept === undefined) {
          kept = record.value === null ? null : record;
          if (kept !== null) this.keptCount++;
        }
        const below = record.modRevision <= this.compactRevision;
        if (below && inDatabase === undefined) inDatabase = record.value === null ? null : record;
        entries.push({ key, record, unkept: below && record !== kept, compacted: below && record !== inDatabase });
      }
      return true;
    });
    if (entries.length > 0) {
      entries.sort((a, b) => (before(a.record, b.record) ? -1 : before(b.record, a.record) ? 1 : 0));
      this.runs.push({
        keys: entries.map((entry) => entry.key),
        records: entries.map((entry) => entry.record),
        unkept: entries.map((entry) => entry.unkept),
        compacted: entries.map((entry) => entry.compacted),
        next: 0,
      });
    }
    if (visited < budget || last === null) {
      this.cursor = null;
      this.merging = true;
      this.heap = this.newHeap(this.runs.map((_, index) => index));
      if (this.heap.size === 0) this.finish();
    } else {
      this.cursor = successorKey(last);
    }
  }

  /** Hashes up to `budget` records in revision order. */
  private merge(budget: number): void {
    for (let done = 0; done < budget && this.heap.size > 0; done++) {
      const run = this.runs[this.heap.peek()!]!;
      if (this.keptCount > 0 ? !run.unkept[run.next] : !run.compacted[run.next]) writeRevision(this.writer, run.keys[run.next]!, run.records[run.next]!);
      run.next++;
      if (run.next === run.records.length) this.heap.pop();
      else this.heap.topChanged();
    }
    if (this.heap.size === 0) this.finish();
  }

  private finish(): void {
    this.writer.flush();
    this.finished = { hash: this.sink.value, compactRevision: this.compactRevision, revision: this.revision };
    this.runs = [];
  }

  private headOf(index: number): KeyRecord {
    const run = this.runs[index]!;
    return run.records[run.next]!;
  }

  private newHeap(runIndexes: number[]): MinHeap<number> {
    return new MinHeap((a, b) => before(this.headOf(a), this.headOf(b)), runIndexes);
  }
}
