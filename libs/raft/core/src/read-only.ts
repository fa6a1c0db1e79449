import { setUint64le } from '@ward/shared/binary';
import type { NodeId } from './ids';
import type { Index } from './types';

/** How a leader answers ReadIndex requests. */
export type ReadOnlyOption = 'safe' | 'lease-based';

/** A ReadIndex request waiting for its heartbeat round. */
export interface PendingRead {
  /** Who asked: the leader itself, or a follower that forwarded the request. */
  readonly from: NodeId;
  readonly context: Uint8Array;
  /** The leader's commit index when the request arrived. */
  readonly index: Index;
}

/** Upper bound on queued ReadIndex requests; beyond it new requests are dropped. */
export const MAX_PENDING_READS = 65_536;

/**
 * The ReadIndex queue of a leader (safe mode). Requests are numbered in arrival order; each
 * heartbeat carries the number of the newest request as its context (8 bytes, little-endian),
 * followers echo it, and once a quorum has echoed number n every request up to n is confirmed:
 * this leader was still the leader after they arrived. Numbering (rather than matching the
 * caller's context) makes duplicate contexts harmless.
 */
export class ReadOnly {
  private readonly acks = new Map<NodeId, number>();
  private unconfirmed: PendingRead[] = [];
  private confirmed = 0;

  constructor(readonly option: ReadOnlyOption) {}

  /** Queues a request; false if the queue is full (the request is dropped). */
  addRequest(read: PendingRead): boolean {
    if (this.unconfirmed.length >= MAX_PENDING_READS) return false;
    this.unconfirmed.push(read);
    return true;
  }

  /** Records that `from` echoed a heartbeat context. */
  recvAck(from: NodeId, context: Uint8Array): void {
    const position = decodePosition(context);
    if (position === undefined) return;
    const previous = this.acks.get(from) ?? 0;
    if (position > previous) this.acks.set(from, position);
  }

  /** The highest request number `id` has confirmed (0 if none). */
  ackedBy(id: NodeId): number {
    return this.acks.get(id) ?? 0;
  }

  /**
   * Given the number of requests a quorum has confirmed, returns the requests that became
   * confirmed, oldest first.
   */
  advance(quorumConfirmed: number): PendingRead[] {
    if (quorumConfirmed <= this.confirmed) return [];
    const count = Math.min(quorumConfirmed - this.confirmed, this.unconfirmed.length);
    const done = this.unconfirmed.slice(0, count);
    this.unconfirmed = this.unconfirmed.slice(count);
    this.confirmed += count;
    return done;
  }

  /** The context the next heartbeat should carry: empty when nothing waits. */
  heartbeatContext(): Uint8Array {
    if (this.unconfirmed.length === 0) return EMPTY;
    return encodePosition(this.confirmed + this.unconfirmed.length);
  }

  pendingCount(): number {
    return this.unconfirmed.length;
  }
}

const EMPTY = new Uint8Array(0);

/** u64 LE, written into the array (no DataView over a new array's buffer: see setUint64le). */
export function encodePosition(position: number): Uint8Array {
  const out = new Uint8Array(8);
  setUint64le(out, 0, position);
  return out;
}

export function decodePosition(context: Uint8Array): number | undefined {
  if (context.length !== 8) return undefined;
  const view = new DataView(context.buffer, context.byteOffset, 8);
  const high = view.getUint32(4, true);
  if (high > 0x1f_ffff) return undefined;
  return high * 0x1_0000_0000 + view.getUint32(0, true);
}
