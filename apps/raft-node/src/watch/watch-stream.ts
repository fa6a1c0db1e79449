// One Watch stream (etcd's serverWatchStream) over this member's applied state: watcher ids,
// created / canceled responses as etcd sends them, the permission check at creation, compaction,
// progress requests and notifications, prev_kv, filters and fragmentation. Events are read from
// the key space's bounded history on demand, a page per watcher at a time, and only while the
// gRPC stream accepts writes: a slow client is paged, never buffered without bound, and a
// watcher that falls behind the history is canceled with the revision to resume from.
import {
  INVALID_WATCH_ID,
  WATCH_CANCEL_REASONS,
  decodeEtcdMessage,
  encodeEtcdMessage,
  fragmentWatchResponse,
  watchRequestFromProto,
  watchResponseToProto,
  type ResponseContext,
  type WatchCreateRequest,
  type WatchResponse,
} from '@ward/etcd/api-mapping';
import type { Applier } from '@ward/etcd/apply';
import { KVCompactedError } from '@ward/etcd/kv-store';
import type { WatchRequest__Output } from '@ward/etcd/proto';
import { compareBytes } from '@ward/shared/bytes';
import { goStatusString, wireError } from '@ward/etcd/wire-errors';
import { watcherFilters, type Watcher } from './watcher';

export interface WatchStreamLimits {
  readonly maxWatchers: number;
  /** Events read per watcher per response. */
  readonly batchEvents: number;
  /** Size at which a fragment-enabled watcher's response is split (etcd: max request + overhead). */
  readonly fragmentBytes: number;
  /** Responses written while the client is not reading before the stream is ended. */
  readonly maxUnreadResponses: number;
}

export interface WatchStreamDeps {
  readonly applier: () => Applier;
  readonly context: () => ResponseContext;
  /** Writes one encoded WatchResponse; false when the transport buffer is full (wait for drain). */
  readonly write: (bytes: Uint8Array) => boolean;
  /** Ends the stream with an error (a client that stopped reading). */
  readonly fail: (error: Error) => void;
  readonly limits: WatchStreamLimits;
}

/** The identity a gateway forwards with each stream message. */
export interface WatchIdentity {
  readonly username: string;
  readonly authRevision: number;
}

export class WatchStream {
  private readonly watchers = new Map<bigint, Watcher>();
  private nextAutoId = 0n;
  private paused = false;
  private unread = 0;
  private progressDeferred = false;
  private closed = false;
  private cursor = 0;

  constructor(private readonly deps: WatchStreamDeps) {}

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** One NodeWatchRequest: the identity it carries and an encoded etcd WatchRequest. */
  handle(identity: WatchIdentity, requestBytes: Uint8Array): void {
    if (this.closed) return;
    const command = watchRequestFromProto(decodeEtcdMessage<WatchRequest__Output>('etcdserverpb.WatchRequest', requestBytes));
    switch (command.type) {
      case 'create':
        return this.create(identity, command.request);
      case 'cancel':
        return this.cancel(command.watchId);
      case 'progress':
        return this.progress();
      case 'ignored':
        return;
    }
  }

  /** The transport drained: resume paging. */
  drained(): void {
    this.paused = false;
    this.unread = 0;
    this.pump();
  }

  close(): void {
    this.closed = true;
    this.watchers.clear();
  }

  /** Periodic progress notifications (etcd's progressTicker) for progress_notify watchers. */
  progressTick(): void {
    if (this.closed) return;
    const current = this.revision();
    for (const watcher of this.watchers.values()) {
      if (!watcher.progressNotify) continue;
      if (watcher.progressDue && watcher.nextRevision > current) this.send(this.response({ watchId: watcher.id, revision: current }), false);
      watcher.progressDue = true;
    }
  }

  /** Delivers what the watchers have not seen yet, a page each in turn, while the client reads. */
  pump(): void {
    if (this.closed) return;
    let progressed = true;
    while (progressed && !this.paused && !this.closed) {
      progressed = false;
      const current = this.revision();
      const watchers = [...this.watchers.values()];
      for (let i = 0; i < watchers.length && !this.paused; i++) {
        const watcher = watchers[(this.cursor + i) % watchers.length]!;
        if (watcher.nextRevision > current || !this.watchers.has(watcher.id)) continue;
        this.deliverPage(watcher);
        progressed = true;
      }
      this.cursor++;
    }
    if (this.progressDeferred && this.allCaughtUp()) {
      this.progressDeferred = false;
      this.send(this.response({ watchId: INVALID_WATCH_ID, revision: this.revision() }), false);
    }
  }

  private create(identity: WatchIdentity, request: WatchCreateRequest): void {
    const current = this.revision();
    if (request.startRevision < 0) return this.refuse(wireError('Compacted').message);
    const denied = this.permission(identity, request);
    if (denied !== undefined) return this.refuse(denied);
    if (this.watchers.size >= this.deps.limits.maxWatchers) return this.refuse(goStatusString('TooManyRequests'));
    const open = request.rangeEnd.length === 0 || (request.rangeEnd.length === 1 && request.rangeEnd[0] === 0);
    if (!open && compareBytes(request.key, request.rangeEnd) >= 0) return this.refuse(WATCH_CANCEL_REASONS.emptyRange);
    let id = request.watchId;
    if (id === 0n) {
      while (this.watchers.has(this.nextAutoId)) this.nextAutoId++;
      id = this.nextAutoId++;
    } else if (this.watchers.has(id)) {
      return this.refuse(WATCH_CANCEL_REASONS.duplicateId);
    }
    this.watchers.set(id, {
      id,
      // Copies: decoded bytes fields are views into the gRPC receive buffer, and a watcher lives on.
      key: new Uint8Array(request.key),
      rangeEnd: new Uint8Array(request.rangeEnd),
      ...watcherFilters(request.filters),
      prevKv: request.prevKv,
      fragment: request.fragment,
      progressNotify: request.progressNotify,
      nextRevision: request.startRevision === 0 ? current + 1 : request.startRevision,
      progressDue: true,
    });
    this.send(this.response({ watchId: id, revision: current, created: true }), false);
    this.pump();
  }

  /**
   * READ on the watched range, as the stream's identity, at creation only (etcd-auth §3.5). The
   * whole range is checked, from-key watches included (etcd's recvLoop empties a from-key range
   * end before its check and so checks only the first key; ward does not follow it there).
   */
  private permission(identity: WatchIdentity, request: WatchCreateRequest): string | undefined {
    const code = this.deps.applier().authView.checkAccess(identity, 'read', request.key, request.rangeEnd);
    if (code === null) return undefined;
    if (code === 'ERR_AUTH_USER_EMPTY') return goStatusString('UserEmpty');
    if (code === 'ERR_AUTH_OLD_REVISION') return goStatusString('AuthOldRevision');
    return goStatusString('PermissionDenied');
  }

  /** A refused create: etcd answers created + canceled with watch id -1 and the reason. */
  private refuse(reason: string): void {
    this.send(this.response({ watchId: INVALID_WATCH_ID, revision: this.revision(), created: true, canceled: true, cancelReason: reason }), false);
  }

  private cancel(id: bigint): void {
    if (!this.watchers.delete(id)) return;
    this.send(this.response({ watchId: id, revision: this.revision(), canceled: true }), false);
  }

  /** etcd's RequestProgressAll: answered once every watcher is caught up; nothing without watchers. */
  private progress(): void {
    if (this.watchers.size === 0) return;
    if (this.allCaughtUp()) this.send(this.response({ watchId: INVALID_WATCH_ID, revision: this.revision() }), false);
    else this.progressDeferred = true;
  }

  private deliverPage(watcher: Watcher): void {
    const kv = this.deps.applier().keySpaceView;
    let page;
    try {
      page = kv.readEvents({
        fromRevision: watcher.nextRevision,
        key: watcher.key,
        rangeEnd: watcher.rangeEnd.length === 0 ? undefined : watcher.rangeEnd,
        prevKv: watcher.prevKv,
        maxEvents: this.deps.limits.batchEvents,
      });
    } catch (error) {
      if (!(error instanceof KVCompactedError)) throw error;
      // Behind the history: canceled, naming where to resume (etcd's compacted response, header revision 0).
      this.watchers.delete(watcher.id);
      this.send(this.response({ watchId: watcher.id, revision: 0, canceled: true, compactRevision: error.compactRevision }), false);
      return;
    }
    watcher.nextRevision = page.nextRevision;
    const events = page.events.filter((e) => !(e.type === 'PUT' ? watcher.noPut : watcher.noDelete));
    if (events.length === 0) return;
    watcher.progressDue = false;
    this.send(this.response({ watchId: watcher.id, revision: page.nextRevision - 1, events }), watcher.fragment);
  }

  private allCaughtUp(): boolean {
    const current = this.revision();
    for (const watcher of this.watchers.values()) if (watcher.nextRevision <= current) return false;
    return true;
  }

  private revision(): number {
    return this.deps.applier().keySpaceView.currentRevision;
  }

  private response(fields: Partial<WatchResponse> & { watchId: bigint; revision: number }): WatchResponse {
    return { created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [], ...fields };
  }

  private send(response: WatchResponse, fragment: boolean): void {
    if (this.closed) return;
    const proto = watchResponseToProto(response, this.deps.context());
    const parts = fragment ? fragmentWatchResponse(proto, this.deps.limits.fragmentBytes) : [proto];
    for (const part of parts) {
      if (!this.deps.write(encodeEtcdMessage('etcdserverpb.WatchResponse', part))) this.paused = true;
      if (this.paused && ++this.unread > this.deps.limits.maxUnreadResponses) {
        this.closed = true;
        this.deps.fail(wireError('TooManyRequests'));
        return;
      }
    }
  }
}
