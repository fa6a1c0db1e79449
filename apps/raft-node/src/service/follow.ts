// Follow: the feed of a gateway's read replica. A new stream gets this member's Applier snapshot at
// its applied index (in chunks), then, after every apply batch, the request entries the batch
// applied and the applied index it reached, in log order. What the replica applies is exactly what
// this member applied (entries it could not decode are not sent), with the same limits, so the
// replica's state at index i is this member's state at index i.
//
// The snapshot is taken in turns between which the member keeps serving (the state at the index
// where it started: batches applied meanwhile wait behind it), then goes out from the state's
// chunks, a few messages at a time, the next when the stream has taken the previous (a state of
// any size passes, at the reader's pace, and is never copied whole). A compaction applied while it
// is taken spoils it: the stream ends ABORTED and the replica follows again.
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
import { takeInTurns } from '../snapshot-turns';

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
/** Snapshot chunks a stream may hold unsent; the next goes when it has taken one. */
const SNAPSHOT_CHUNKS_IN_FLIGHT = 4;

interface Message {
  readonly message: FollowMessage;
  readonly bytes: number;
}

/** A follower's snapshot: being taken, then the part not yet written to its stream. */
interface SnapshotInFlight {
  /** The state's chunks once taken (undefined while it is being taken). */
  chunks: readonly Uint8Array[] | undefined;
  /** Next chunk to send from, and where in it. */
  chunkIndex: number;
  chunkOffset: number;
  readonly index: number;
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
  /** Settles the handler: resolved ends the stream OK, rejected with the status. */
  readonly finished: (error?: Error) => void;
}

export class FollowFeeds {
  private readonly followers = new Set<Follower>();

  constructor(private readonly options: FollowFeedsOptions) {}

  get followerCount(): number {
    return this.followers.size;
  }

  /** Serves one Follow stream until the follower goes away or is dropped. */
  serve(core: NodeCore, call: FollowCall): Promise<void> {
    if (this.followers.size >= this.options.maxFollowers) {
      return Promise.reject(new GrpcStatusError(GrpcStatus.RESOURCE_EXHAUSTED, 'etcdserver: too many requests'));
    }
    return new Promise<void>((resolve, reject) => {
      const follower: Follower = { call, unsentBytes: 0, snapshot: undefined, finished: (error) => (error === undefined ? resolve() : reject(error)) };
      const gone = (): void => this.drop(follower);
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
      this.followers.add(follower);
      this.startSnapshot(core, follower);
    });
  }

  /** An apply batch: every follower gets its request entries and the applied index reached. */
  applied(core: NodeCore, batch: readonly AppliedRequest[], appliedIndex: number): void {
    if (this.followers.size === 0) return;
    const entries = batch.map(({ index, data }) => ({ index, data: asBuffer(data) }));
    let bytes = MESSAGE_OVERHEAD_BYTES;
    for (const entry of entries) bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
    const message: FollowMessage = { ...header(core), applied_index: appliedIndex, entries };
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
    for (const follower of [...this.followers]) this.end(follower, GrpcStatus.ABORTED, reason);
  }

  close(): void {
    this.restart('the member is stopping');
  }

  private startSnapshot(core: NodeCore, follower: Follower): void {
    const state = core.stateMachine;
    const task = state.applier.snapshotTask();
    const snapshot: SnapshotInFlight = {
      chunks: undefined,
      chunkIndex: 0,
      chunkOffset: 0,
      index: state.appliedIndex,
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
    takeInTurns(() => task.step(), dropped).then(
      (result) => {
        if (result === 'dropped') return;
        if (result === 'stale') return this.end(follower, GrpcStatus.ABORTED, 'a compaction was applied while the state was taken; follow again');
        // Empty chunks carry nothing: every message then has bytes, and the last one ends the state.
        snapshot.chunks = task.chunks.filter((chunk) => chunk.length > 0);
        this.sendSnapshotChunks(core, follower);
      },
      (error: unknown) => {
        this.options.logger.error({ err: error }, 'replica feed snapshot failed');
        this.end(follower, GrpcStatus.INTERNAL, 'the state could not be taken');
      },
    );
  }

  /** Writes snapshot messages while the stream holds few unsent; then the batches held behind it. */
  private sendSnapshotChunks(core: NodeCore, follower: Follower): void {
    const snapshot = follower.snapshot;
    if (snapshot?.chunks === undefined || !this.followers.has(follower)) return;
    const { chunks, index, limits } = snapshot;
    const size = this.options.chunkBytes;
    while (follower.unsentBytes < SNAPSHOT_CHUNKS_IN_FLIGHT * size) {
      const from = chunks[snapshot.chunkIndex]!;
      const part = asBuffer(from.subarray(snapshot.chunkOffset, snapshot.chunkOffset + size));
      snapshot.chunkOffset += part.length;
      if (snapshot.chunkOffset === from.length) {
        snapshot.chunkIndex += 1;
        snapshot.chunkOffset = 0;
      }
      const last = snapshot.chunkIndex === chunks.length;
      const message: FollowMessage = { ...header(core), applied_index: index, snapshot: { index, limits, chunk: part, last } };
      follower.unsentBytes += part.length + MESSAGE_OVERHEAD_BYTES;
      follower.call.write(message, () => this.taken(core, follower, part.length + MESSAGE_OVERHEAD_BYTES));
      if (!last) continue;
      follower.snapshot = undefined;
      for (const held of snapshot.held) if (!this.write(follower, held.message, held.bytes)) return;
      return;
    }
  }

  /** The stream took a message of `bytes`: count it out, and send more of a snapshot. */
  private taken(core: NodeCore, follower: Follower, bytes: number): void {
    follower.unsentBytes -= bytes;
    if (follower.snapshot !== undefined) this.sendSnapshotChunks(core, follower);
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
    if (!this.followers.has(follower)) return;
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
    if (!this.followers.delete(follower)) return;
    follower.finished(error);
  }
}

function header(core: NodeCore): Pick<FollowMessage, 'cluster_id' | 'member_id' | 'raft_term'> {
  return { cluster_id: core.config.clusterId.toString(), member_id: core.config.memberId.toString(), raft_term: core.driver.currentTerm };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
