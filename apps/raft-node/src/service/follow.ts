// Follow: the feed of a gateway's read replica. A new stream gets this member's Applier snapshot at
// its applied index (in chunks), then, after every apply batch, the request entries the batch
// applied and the applied index it reached, in log order. What the replica applies is exactly what
// this member applied (entries it could not decode are not sent), with the same limits, so the
// replica's state at index i is this member's state at index i.
//
// The snapshot is the state at the index where it started (batches applied meanwhile wait behind
// it), streamed: sized in turns between which the member keeps serving, then encoded a turn at a
// time into a few reused buffers (snapshot-turns.ts) as the stream takes its messages, a few at a
// time (a state of any size passes, at the reader's pace, and is never held whole). A compaction
// applied before it is out spoils it: the stream ends ABORTED and the replica follows again.
//
// A replica that still holds a state names its applied index and that entry's term: when this
// member's log holds that entry with that term, it has applied at least that far and the entries
// since fit half of `maxBufferedBytes`, the stream goes on from there with those entries (read from
// the log: the same committed entries every member applies), without a snapshot. A replica ahead
// of this member (it followed one that had applied more) waits up to RESUME_WAIT_MS for this one
// to apply as far first. A member restart or a replica's switch to another member then costs the
// replica the entries it missed, not the whole state (hundreds of MB at a million keys, decoded in
// one piece on the gateway).
//
// A replica names the largest state it takes: a larger one ends its stream with FAILED_PRECONDITION
// once sized, before any of it is encoded or sent.
//
// Bounds: at most `maxFollowers` streams; a follower whose stream holds more than
// `maxBufferedBytes` (or `maxBufferedMessages`) of batches unsent (written and not yet taken by
// the stream, or waiting behind its snapshot) loses it and starts again from a new snapshot.
// Installing a snapshot from the leader ends every stream the same way.
import { status as GrpcStatus, type ServerWritableStream } from '@grpc/grpc-js';
import type { FollowMessage, FollowRequest__Output } from '@ward/etcd/proto';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { AppliedRequest } from '../state-machine';
import type { NodeCore } from './node-core';
import { resetStream } from './snapshot';
import { PooledSnapshot, SnapshotGivenUp } from '../snapshot-turns';

type FollowCall = ServerWritableStream<FollowRequest__Output, FollowMessage>;

export interface FollowFeedsOptions {
  readonly maxFollowers: number;
  readonly maxBufferedBytes: number;
  readonly maxBufferedMessages: number;
  /** Snapshot bytes per message. */
  readonly chunkBytes: number;
  readonly logger: Logger;
}

export const DEFAULT_FOLLOW_FEEDS: Omit<FollowFeedsOptions, 'logger'> = Object.freeze({
  maxFollowers: 64,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxBufferedMessages: 16_384,
  chunkBytes: 1024 * 1024,
});

/** Per-message framing allowance on top of the entries' bytes. */
const MESSAGE_OVERHEAD_BYTES = 64;
const ENTRY_OVERHEAD_BYTES = 16;
/**
 * How long a replica ahead of this member (it followed a member that had applied more) waits for
 * this one to apply as far before the decision between its entries and a snapshot is made.
 */
const RESUME_WAIT_MS = 2000;
/** Snapshot chunks a stream may hold unsent; the next goes when it has taken one. */
const SNAPSHOT_CHUNKS_IN_FLIGHT = 4;

interface Message {
  readonly message: FollowMessage;
  readonly bytes: number;
}

/** A follower's snapshot: being sized, then encoded and written to its stream as it takes it. */
interface SnapshotInFlight {
  /** The state's bytes as they are encoded, once sized (undefined while it is being sized). */
  pieces: AsyncGenerator<Uint8Array> | undefined;
  /** The piece being sent (its buffer is reused once the next is asked for), and where in it. */
  piece: Uint8Array | undefined;
  pieceOffset: number;
  /** A message is being made (the next piece may be encoded meanwhile): one at a time. */
  sending: boolean;
  readonly index: number;
  /** The term of the entry at `index` (0: not known). */
  readonly term: number;
  readonly limits: NonNullable<FollowMessage['snapshot']>['limits'];
  /** Apply batches that came after the snapshot's index, in order, sent once it is out. */
  readonly held: Message[];
  heldBytes: number;
}

interface Follower {
  readonly call: FollowCall;
  /** Bytes written to the stream and not yet taken by it (its write callback has not run). */
  unsentBytes: number;
  /** The snapshot still being sent, undefined once it is out. */
  snapshot: SnapshotInFlight | undefined;
  /** The largest state the follower takes (bytes; 0: any). */
  readonly maxSnapshotBytes: number;
  /** Settles the handler: resolved ends the stream OK, rejected with the status. */
  readonly finished: (error?: Error) => void;
}

export class FollowFeeds {
  private readonly followers = new Set<Follower>();
  /** Followers ahead of this member, waiting for it to apply as far (not fed yet). */
  private readonly waiting = new Set<Follower>();

  constructor(private readonly options: FollowFeedsOptions) {}

  get followerCount(): number {
    return this.followers.size;
  }

  /** Serves one Follow stream until the follower goes away or is dropped. */
  serve(core: NodeCore, call: FollowCall): Promise<void> {
    if (this.followers.size + this.waiting.size >= this.options.maxFollowers) {
      return Promise.reject(new GrpcStatusError(GrpcStatus.RESOURCE_EXHAUSTED, 'etcdserver: too many requests'));
    }
    return new Promise<void>((resolve, reject) => {
      const maxSnapshotBytes = Number(call.request?.max_snapshot_bytes ?? 0);
      const follower: Follower = { call, unsentBytes: 0, snapshot: undefined, maxSnapshotBytes, finished: (error) => (error === undefined ? resolve() : reject(error)) };
      const gone = (): void => this.drop(follower);
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
      const from = call.request;
      const fromIndex = Number(from?.from_index ?? 0);
      const fromTerm = Number(from?.from_term ?? 0);
      const begin = (): void => {
        this.followers.add(follower);
        if (fromIndex > 0 && this.resume(core, follower, fromIndex, fromTerm)) return;
        this.startSnapshot(core, follower);
      };
      if (fromIndex <= core.stateMachine.appliedIndex) return begin();
      this.waiting.add(follower);
      void core.applied.wait(fromIndex, RESUME_WAIT_MS).then(() => {
        // Gone meanwhile (dropped, or every stream ended) unless still waiting.
        if (this.waiting.delete(follower)) begin();
      });
    });
  }

  /**
   * Goes on from the replica's `fromIndex` with the request entries applied since, when the log
   * still holds them (see the file comment); false when the follower needs a snapshot instead.
   */
  private resume(core: NodeCore, follower: Follower, fromIndex: number, fromTerm: number): boolean {
    const state = core.stateMachine;
    const through = state.appliedIndex;
    const entries = core.driver.persistedEntriesAfter(fromIndex, fromTerm, through, this.options.maxBufferedBytes / 2);
    if (entries === undefined) return false;
    let batch: { index: number; data: Buffer }[] = [];
    let bytes = MESSAGE_OVERHEAD_BYTES;
    const flush = (appliedIndex: number, appliedTerm: number): void => {
      const message: FollowMessage = { ...header(core), applied_index: appliedIndex, applied_term: appliedTerm, entries: batch };
      this.write(follower, message, bytes);
      batch = [];
      bytes = MESSAGE_OVERHEAD_BYTES;
    };
    for (const entry of entries) {
      if (!state.isRequestEntry(entry)) continue;
      batch.push({ index: entry.index, data: asBuffer(entry.data) });
      bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
      if (bytes >= this.options.chunkBytes) flush(entry.index, entry.term);
    }
    // Always a last message, if only to tell the replica it goes on from its state.
    flush(through, core.driver.termAt(through) ?? 0);
    this.options.logger.info({ fromIndex, through, entries: entries.length }, 'replica feed resumed');
    return true;
  }

  /** An apply batch: every follower gets its request entries and the applied index reached. */
  applied(core: NodeCore, batch: readonly AppliedRequest[], appliedIndex: number): void {
    if (this.followers.size === 0) return;
    const entries = batch.map(({ index, data }) => ({ index, data: asBuffer(data) }));
    let bytes = MESSAGE_OVERHEAD_BYTES;
    for (const entry of entries) bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
    const message: FollowMessage = { ...header(core), applied_index: appliedIndex, applied_term: core.driver.termAt(appliedIndex) ?? 0, entries };
    for (const follower of [...this.followers]) {
      const snapshot = follower.snapshot;
      if (snapshot === undefined) {
        this.write(follower, message, bytes);
        continue;
      }
      snapshot.held.push({ message, bytes });
      snapshot.heldBytes += bytes;
      if (snapshot.heldBytes > this.options.maxBufferedBytes || snapshot.held.length > this.options.maxBufferedMessages) {
        this.end(follower, GrpcStatus.RESOURCE_EXHAUSTED, 'the replica fell too far behind');
      }
    }
  }

  /** The state was replaced (a snapshot from the leader): followers start again from it. */
  restart(reason: string): void {
    for (const follower of [...this.followers, ...this.waiting]) this.end(follower, GrpcStatus.ABORTED, reason);
  }

  close(): void {
    this.restart('the member is stopping');
  }

  private startSnapshot(core: NodeCore, follower: Follower): void {
    const state = core.stateMachine;
    const taken = new PooledSnapshot((stream) => state.applier.snapshotTask(stream));
    const snapshot: SnapshotInFlight = {
      pieces: undefined,
      piece: undefined,
      pieceOffset: 0,
      sending: false,
      index: state.appliedIndex,
      term: core.driver.termAt(state.appliedIndex) ?? 0,
      limits: {
        max_txn_ops: core.config.maxTxnOpsCount,
        event_history_max_events: core.config.eventHistoryEventsCount,
        max_simple_tokens: core.config.maxSimpleTokensCount,
        max_simple_tokens_per_user: core.config.maxSimpleTokensPerUserCount,
      },
      held: [],
      heldBytes: 0,
    };
    follower.snapshot = snapshot;
    const dropped = (): boolean => !this.followers.has(follower) || follower.snapshot !== snapshot;
    taken.size(dropped).then(
      (result) => {
        if (result === 'dropped') return;
        if (result === 'stale') return this.snapshotStale(follower);
        const bytes = taken.task.sizeBytes!;
        if (follower.maxSnapshotBytes > 0 && bytes > follower.maxSnapshotBytes) {
          return this.end(follower, GrpcStatus.FAILED_PRECONDITION, `the state is ${bytes} bytes, more than the ${follower.maxSnapshotBytes} the replica takes`);
        }
        snapshot.pieces = taken.pieces(dropped);
        void this.sendSnapshotChunks(core, follower);
      },
      (error: unknown) => this.snapshotFailed(follower, error),
    );
  }

  private snapshotStale(follower: Follower): void {
    this.end(follower, GrpcStatus.ABORTED, 'a compaction was applied while the state was taken; follow again');
  }

  private snapshotFailed(follower: Follower, error: unknown): void {
    this.options.logger.error({ err: error }, 'replica feed snapshot failed');
    this.end(follower, GrpcStatus.INTERNAL, 'the state could not be taken');
  }

  /**
   * Writes snapshot messages while the stream holds few unsent, each a copy (the stream may keep
   * a message a while; the buffer it came from is reused), encoding more of the state as it goes;
   * after the last, the batches held behind it.
   */
  private async sendSnapshotChunks(core: NodeCore, follower: Follower): Promise<void> {
    const snapshot = follower.snapshot;
    if (snapshot?.pieces === undefined || snapshot.sending) return;
    const current = (): boolean => this.followers.has(follower) && follower.snapshot === snapshot;
    const { pieces, index, term, limits } = snapshot;
    const size = this.options.chunkBytes;
    /** The next piece with bytes, or undefined once the state is out. */
    const nextPiece = async (): Promise<Uint8Array | undefined> => {
      for (;;) {
        const next = await pieces.next();
        if (next.done) return undefined;
        if (next.value.length > 0) return next.value;
      }
    };
    snapshot.sending = true;
    try {
      if (snapshot.piece === undefined && snapshot.pieceOffset === 0) {
        snapshot.piece = await nextPiece();
        if (snapshot.piece === undefined) throw new Error('the state gave no bytes');
      }
      while (current() && follower.unsentBytes < SNAPSHOT_CHUNKS_IN_FLIGHT * size) {
        const piece = snapshot.piece!;
        const part = Buffer.from(piece.subarray(snapshot.pieceOffset, snapshot.pieceOffset + size));
        snapshot.pieceOffset += part.length;
        if (snapshot.pieceOffset === piece.length) {
          snapshot.piece = await nextPiece();
          snapshot.pieceOffset = 0;
          if (!current()) return;
        }
        const last = snapshot.piece === undefined;
        const message: FollowMessage = { ...header(core), applied_index: index, applied_term: term, snapshot: { index, limits, chunk: part, last } };
        follower.unsentBytes += part.length + MESSAGE_OVERHEAD_BYTES;
        follower.call.write(message, () => this.taken(core, follower, part.length + MESSAGE_OVERHEAD_BYTES));
        if (!last) continue;
        follower.snapshot = undefined;
        for (const held of snapshot.held) if (!this.write(follower, held.message, held.bytes)) return;
        return;
      }
    } catch (error) {
      if (!(error instanceof SnapshotGivenUp)) return this.snapshotFailed(follower, error);
      if (error.reason === 'stale') this.snapshotStale(follower);
    } finally {
      snapshot.sending = false;
    }
  }

  /** The stream took a message of `bytes`: count it out, and send more of a snapshot. */
  private taken(core: NodeCore, follower: Follower, bytes: number): void {
    follower.unsentBytes -= bytes;
    if (follower.snapshot !== undefined) void this.sendSnapshotChunks(core, follower);
  }

  /** Writes one message; drops the follower (false) when it is too far behind. */
  private write(follower: Follower, message: FollowMessage, bytes: number): boolean {
    if (!this.followers.has(follower)) return false;
    const { call } = follower;
    if (follower.unsentBytes + bytes > this.options.maxBufferedBytes || call.writableLength > this.options.maxBufferedMessages) {
      this.end(follower, GrpcStatus.RESOURCE_EXHAUSTED, 'the replica fell too far behind');
      return false;
    }
    follower.unsentBytes += bytes;
    call.write(message, () => (follower.unsentBytes -= bytes));
    return true;
  }

  private end(follower: Follower, code: GrpcStatus, details: string): void {
    if (!this.followers.has(follower) && !this.waiting.has(follower)) return;
    this.options.logger.info({ code, reason: details }, 'replica feed ended');
    // A stream whose reader's window is full cannot take a status: reset it instead.
    if (follower.call.writableLength > 0) {
      this.drop(follower);
      resetStream(follower.call);
    } else {
      this.drop(follower, new GrpcStatusError(code, details));
    }
  }

  private drop(follower: Follower, error?: Error): void {
    const fed = this.followers.delete(follower);
    if (!fed && !this.waiting.delete(follower)) return;
    follower.finished(error);
  }
}

function header(core: NodeCore): Pick<FollowMessage, 'cluster_id' | 'member_id' | 'raft_term'> {
  return { cluster_id: core.config.clusterId.toString(), member_id: core.config.memberId.toString(), raft_term: core.driver.currentTerm };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
