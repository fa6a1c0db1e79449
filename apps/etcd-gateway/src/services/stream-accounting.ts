// Per-caller accounting of the client streams (Watch and LeaseKeepAlive) and of the watchers on
// them, checked before anything is spent on a stream (a member stream, a renewal). A stream counts
// against its client connection and against its caller: the user of its token, or, while
// anonymous (no token, an invalid token, auth off), the client's address. One caller therefore
// never holds more than its own bound, and the gateway's global stream caps (WatchRelay,
// KeepAliveRelay) stay a last resort that only many callers together can reach.
import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError, type Cancellation } from '@ward/platform/grpc-server';
import { wireError } from '@ward/etcd/wire-errors';
import type { Credentials } from '../identity/identity';
import { addressOfPeer } from '../identity/token-extraction';

/** The per-caller bounds (GATEWAY_MAX_STREAMS_PER_* and GATEWAY_MAX_WATCHERS_PER_*). */
export interface CallerLimits {
  /** Watch and LeaseKeepAlive streams on one client connection. */
  readonly streamsPerConnection: number;
  /** Streams of one user (the token's). */
  readonly streamsPerUser: number;
  /** Streams of one anonymous client address. */
  readonly streamsPerAddress: number;
  /** Watchers on one Watch stream (created or being created). */
  readonly watchersPerStream: number;
  /** Watchers of one caller (user, or anonymous address) over all its streams. */
  readonly watchersPerCaller: number;
}

/** Who opened a stream. */
export interface Caller {
  /** The client connection (grpc-js peer, `address:port`). */
  readonly connection: string;
  /** The client address (the peer without its port). */
  readonly address: string;
  /** The user of the stream's token; '' while anonymous. */
  readonly username: string;
}

/** A caller as grpc-js reports its connection, with the user its token resolved to. */
export function callerOf(peer: string, username: string): Caller {
  return { connection: peer, address: addressOfPeer(peer), username };
}

/** Counts by key; a key whose count drops to 0 is forgotten (the map never outgrows the live keys). */
class Counts {
  private readonly counts = new Map<string, number>();

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string, delta: number): void {
    const next = this.get(key) + delta;
    if (next < 0) throw new Error(`stream accounting: count of ${key} below zero`);
    if (next === 0) this.counts.delete(key);
    else this.counts.set(key, next);
  }

  get keysCount(): number {
    return this.counts.size;
  }
}

/**
 * One admitted stream: it holds a slot of its connection and of its caller until released, and
 * its watchers' slots. release() is idempotent and gives back everything the stream holds, so
 * every end path (client cancel, client end, member error, idle close) can call it.
 */
export class StreamSlot {
  private watchers = 0;
  private released = false;

  constructor(
    private readonly accounting: StreamAccounting,
    readonly caller: Caller,
    private readonly callerKey: string,
  ) {}

  /** Watchers this stream holds. */
  get watchersCount(): number {
    return this.watchers;
  }

  /** Takes a watcher slot; false (nothing taken) when the stream or its caller is at its bound. */
  addWatcher(): boolean {
    if (this.released) return false;
    if (!this.accounting.takeWatcher(this.callerKey, this.watchers)) return false;
    this.watchers += 1;
    return true;
  }

  /** Gives back one watcher slot (a watcher canceled, refused or ended); ignored when none is held. */
  removeWatcher(): void {
    if (this.released || this.watchers === 0) return;
    this.watchers -= 1;
    this.accounting.giveWatchers(this.callerKey, 1);
  }

  /** Gives back the stream's slots and its watchers'. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.accounting.giveStream(this.caller.connection, this.callerKey, this.watchers);
    this.watchers = 0;
  }
}

export class StreamAccounting {
  private readonly streamsByConnection = new Counts();
  private readonly streamsByCaller = new Counts();
  private readonly watchersByCaller = new Counts();

  constructor(private readonly limits: CallerLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`StreamAccounting: ${name} must be a positive integer, got ${value}`);
    }
  }

  /** A slot for one more stream of `caller`, or undefined when its connection or itself is at its bound. */
  admit(caller: Caller): StreamSlot | undefined {
    const key = callerKey(caller);
    const bound = caller.username === '' ? this.limits.streamsPerAddress : this.limits.streamsPerUser;
    if (this.streamsByConnection.get(caller.connection) >= this.limits.streamsPerConnection) return undefined;
    if (this.streamsByCaller.get(key) >= bound) return undefined;
    this.streamsByConnection.add(caller.connection, 1);
    this.streamsByCaller.add(key, 1);
    return new StreamSlot(this, caller, key);
  }

  /** Streams counted against `caller`'s connection and against `caller` (user or anonymous address). */
  streamsOf(caller: Caller): { connection: number; caller: number } {
    return { connection: this.streamsByConnection.get(caller.connection), caller: this.streamsByCaller.get(callerKey(caller)) };
  }

  /** Watchers counted against `caller`. */
  watchersOf(caller: Caller): number {
    return this.watchersByCaller.get(callerKey(caller));
  }

  /** Keys with a non-zero count (0 once every stream is released: nothing leaks). */
  get trackedKeysCount(): number {
    return this.streamsByConnection.keysCount + this.streamsByCaller.keysCount + this.watchersByCaller.keysCount;
  }

  /** @internal StreamSlot's */
  takeWatcher(key: string, streamWatchers: number): boolean {
    if (streamWatchers >= this.limits.watchersPerStream) return false;
    if (this.watchersByCaller.get(key) >= this.limits.watchersPerCaller) return false;
    this.watchersByCaller.add(key, 1);
    return true;
  }

  /** @internal StreamSlot's */
  giveWatchers(key: string, count: number): void {
    if (count > 0) this.watchersByCaller.add(key, -count);
  }

  /** @internal StreamSlot's */
  giveStream(connection: string, key: string, watchers: number): void {
    this.streamsByConnection.add(connection, -1);
    this.streamsByCaller.add(key, -1);
    this.giveWatchers(key, watchers);
  }
}

function callerKey(caller: Caller): string {
  return caller.username === '' ? `address:${caller.address}` : `user:${caller.username}`;
}

/** Who a stream is counted against: IdentityResolver's callerName. */
export interface CallerNames {
  callerName(credentials: Credentials, signal?: Cancellation): Promise<string>;
}

/**
 * A slot for a new client stream from `peer`, counted against its token's user (or its address
 * while anonymous); etcd's `too many requests` when the caller or its connection is at its bound.
 */
export async function admitStream(accounting: StreamAccounting, names: CallerNames, peer: string, credentials: Credentials, signal: AbortSignal): Promise<StreamSlot> {
  const username = await names.callerName(credentials, signal);
  const slot = accounting.admit(callerOf(peer, username));
  if (slot === undefined) throw wireError('TooManyRequests');
  return slot;
}

/**
 * How a stream that asked for nothing within `idleTimeoutMs` is ended: UNAVAILABLE, the code etcd
 * clients treat as transient (clientv3 reopens a Watch or LeaseKeepAlive stream after it and sends
 * its requests at once), so only a client that holds streams without using them loses anything.
 * Not etcd's `too many requests` (RESOURCE_EXHAUSTED), which clientv3 takes as final: the stream
 * is closed for idling, not for a bound.
 */
export function idleStreamError(idleTimeoutMs: number): GrpcStatusError {
  return new GrpcStatusError(Status.UNAVAILABLE, `ward: stream closed: no request within ${idleTimeoutMs} ms`);
}
