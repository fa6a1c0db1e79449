// Follow: the feed of a gateway's read replica. A new stream gets this member's Applier snapshot at
// its applied index (in chunks), then, after every apply batch, the request entries the batch
// applied and the applied index it reached, in log order. What the replica applies is exactly what
// this member applied (entries it could not decode are not sent), with the same limits, so the
// replica's state at index i is this member's state at index i.
//
// Bounds: at most `maxFollowers` streams; a follower whose stream holds more than
// `maxBufferedBytes` (or `maxBufferedMessages`) unsent loses it and starts again from a new
// snapshot. Installing a snapshot from the leader ends every stream the same way.
import { status as GrpcStatus, type ServerWritableStream } from '@grpc/grpc-js';
import type { FollowMessage, FollowRequest__Output } from '@ward/etcd/proto';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { AppliedRequest } from '../state-machine';
import type { NodeCore } from './node-core';
import { resetStream } from './snapshot';

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

interface Follower {
  readonly call: FollowCall;
  /** Bytes written since the stream last drained. */
  bufferedBytes: number;
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
      const follower: Follower = { call, bufferedBytes: 0, finished: (error) => (error === undefined ? resolve() : reject(error)) };
      const gone = (): void => this.drop(follower);
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
      call.on('drain', () => (follower.bufferedBytes = 0));
      this.followers.add(follower);
      this.sendSnapshot(core, follower);
    });
  }

  /** An apply batch: every follower gets its request entries and the applied index reached. */
  applied(core: NodeCore, batch: readonly AppliedRequest[], appliedIndex: number): void {
    if (this.followers.size === 0) return;
    const entries = batch.map(({ index, data }) => ({ index, data: asBuffer(data) }));
    let bytes = MESSAGE_OVERHEAD_BYTES;
    for (const entry of entries) bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
    const message: FollowMessage = { ...header(core), applied_index: appliedIndex, entries };
    for (const follower of [...this.followers]) this.write(follower, message, bytes);
  }

  /** The state was replaced (a snapshot from the leader): followers start again from it. */
  restart(reason: string): void {
    for (const follower of [...this.followers]) this.end(follower, GrpcStatus.ABORTED, reason);
  }

  close(): void {
    this.restart('the member is stopping');
  }

  private sendSnapshot(core: NodeCore, follower: Follower): void {
    const state = core.stateMachine;
    const data = asBuffer(state.applier.snapshot());
    const index = state.appliedIndex;
    const limits = {
      max_txn_ops: core.config.maxTxnOpsCount,
      event_history_max_events: core.config.eventHistoryEventsCount,
      max_simple_tokens: core.config.maxSimpleTokensCount,
      max_simple_tokens_per_user: core.config.maxSimpleTokensPerUserCount,
    };
    const chunk = this.options.chunkBytes;
    for (let offset = 0; ; offset += chunk) {
      const part = data.subarray(offset, offset + chunk);
      const last = offset + chunk >= data.length;
      const message: FollowMessage = { ...header(core), applied_index: index, snapshot: { index, limits, chunk: part, last } };
      if (!this.write(follower, message, part.length + MESSAGE_OVERHEAD_BYTES)) return;
      if (last) return;
    }
  }

  /** Writes one message; drops the follower (false) when it is too far behind. */
  private write(follower: Follower, message: FollowMessage, bytes: number): boolean {
    if (!this.followers.has(follower)) return false;
    const { call } = follower;
    follower.bufferedBytes += bytes;
    if (follower.bufferedBytes > this.options.maxBufferedBytes || call.writableLength > this.options.maxBufferedMessages) {
      this.end(follower, GrpcStatus.RESOURCE_EXHAUSTED, 'the replica fell too far behind');
      return false;
    }
    call.write(message);
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
