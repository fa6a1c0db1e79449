// wardnode.Node/WatchLeader: each watcher gets the member's Status at once, then again every time
// the member's Raft leader changes. Gateways watch every member: when the leader goes silent (its
// container killed, its host gone: connections to it stay open and calls to it hang) the members
// still up name the new leader as soon as they elect it.
import { status as GrpcStatus, type ServerWritableStream } from '@grpc/grpc-js';
import type { NodeStatusResponse, WatchLeaderRequest__Output } from '@ward/etcd/proto';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { resetStream } from './snapshot';

export type LeaderWatchCall = ServerWritableStream<WatchLeaderRequest__Output, NodeStatusResponse>;

/** Watchers at most (a few per gateway); more are refused with etcd's `too many requests`. */
export const MAX_LEADER_WATCHERS_COUNT = 256;
/**
 * Messages a watcher may leave unread (each a Status of ~100 B; leader changes are rare): a
 * watcher that reads none while that many pile up is cut, and its gateway opens a new watch.
 */
const MAX_UNREAD_MESSAGES = 64;

interface Watcher {
  readonly call: LeaderWatchCall;
  /** Settles the handler: the stream ends OK (or, after a reset, not at all). */
  readonly finished: () => void;
}

export class LeaderWatches {
  private readonly watchers = new Set<Watcher>();
  private closed = false;

  constructor(
    /** The member's Status now. */
    private readonly status: () => NodeStatusResponse,
    private readonly maxWatchers = MAX_LEADER_WATCHERS_COUNT,
  ) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Serves one WatchLeader stream until the watcher goes away or the member stops. */
  serve(call: LeaderWatchCall): Promise<void> {
    if (this.closed) return Promise.reject(new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'etcdserver: server stopped'));
    if (this.watchers.size >= this.maxWatchers) return Promise.reject(new GrpcStatusError(GrpcStatus.RESOURCE_EXHAUSTED, 'etcdserver: too many requests'));
    return new Promise<void>((resolve) => {
      const watcher: Watcher = { call, finished: resolve };
      const gone = (): void => this.drop(watcher);
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
      this.watchers.add(watcher);
      this.send(watcher, this.status());
    });
  }

  /** The member's leader changed (or an election began): every watcher gets the new Status. */
  changed(): void {
    if (this.watchers.size === 0) return;
    const status = this.status();
    for (const watcher of [...this.watchers]) this.send(watcher, status);
  }

  /** The member stops: every stream ends with OK (gateways reopen at another time or member). */
  close(): void {
    this.closed = true;
    for (const watcher of [...this.watchers]) this.drop(watcher);
  }

  private send(watcher: Watcher, status: NodeStatusResponse): void {
    // The stream is in object mode: its writable length counts messages.
    if (watcher.call.writableLength >= MAX_UNREAD_MESSAGES) {
      // Its window is full, so it cannot take a status either: reset it.
      this.drop(watcher);
      resetStream(watcher.call);
      return;
    }
    watcher.call.write(status);
  }

  private drop(watcher: Watcher): void {
    if (this.watchers.delete(watcher)) watcher.finished();
  }
}
