// Reads served by the gateway's read replica, with the members as the fallback. A linearizable read
// takes a read index (one ReadIndex round shared by every read queued for it), waits until the
// replica applied it, and reads locally: it then sees every write committed before it started. A
// serializable read waits only until the replica holds every write this gateway acknowledged, so a
// client reading through the same gateway sees its own writes. Whenever the replica cannot answer
// in time (not synced, lagging, its auth store older than the caller's token, the read index not
// known) the read goes to the members exactly as without a replica.
import { encodeApplyResponse } from '@ward/etcd/api-mapping';
import type { ApplyRequest } from '@ward/etcd/apply';
import { wireError } from '@ward/etcd/wire-errors';
import { status as Status } from '@grpc/grpc-js';
import { nodeWireError } from '@ward/etcd/node-calls';
import type { EncodedEntryTransport, EntryTransport, ReadEntry } from '../requests/request-executor';
import { ReadIndexRounds } from './read-index-rounds';
import type { ReadReplica } from './read-replica';
import type { Cancellation } from '@ward/platform/grpc-server';

/** What the replica path needs from the cluster client. */
export interface ReplicaClusterView extends EncodedEntryTransport {
  readonly highestAppliedIndex: number;
  readIndex(signal?: Cancellation): Promise<number>;
}

export interface ReplicaReadsOptions {
  readonly cluster: ReplicaClusterView;
  readonly replica: ReadReplica;
  /** How long a read waits for the replica to catch up before it goes to the members. */
  readonly catchUpWaitMs: number;
  /** Linearizable reads waiting for a read index at most. */
  readonly maxWaitingReads: number;
}

/** How each read was served; for metrics and tests. */
export interface ReplicaReadCounts {
  local: number;
  fallback: number;
}

/** A replica that missed a read's index while applying: reads skip it until it gets there. */
interface Behind {
  /** The read index it missed. */
  readonly index: number;
  /** Its applied index when last checked, and when that was (performance.now ms). */
  readonly applied: number;
  readonly checkedAtMs: number;
}

export class ReplicaReads implements EntryTransport {
  readonly counts: ReplicaReadCounts = { local: 0, fallback: 0 };
  private readonly rounds: ReadIndexRounds;
  private behind: Behind | undefined;

  constructor(private readonly options: ReplicaReadsOptions) {
    this.rounds = new ReadIndexRounds({
      ask: () => options.cluster.readIndex(),
      maxWaiting: options.maxWaitingReads,
      overloaded: () => wireError('TooManyRequests'),
    });
  }

  propose(entry: Uint8Array, signal?: Cancellation): Promise<Buffer> {
    return this.options.cluster.propose(entry, signal);
  }

  async read(entry: ReadEntry, serializable: boolean, signal?: Cancellation): Promise<Buffer> {
    const { replica, cluster } = this.options;
    if (!replica.ready || this.stillBehind()) return this.fallback(entry, serializable, signal);
    let target: number;
    if (serializable) {
      target = cluster.highestAppliedIndex;
    } else {
      try {
        target = await this.rounds.request();
      } catch {
        return this.fallback(entry, serializable, signal);
      }
    }
    if (signal?.aborted) throw wireError('Canceled');
    const appliedBefore = replica.appliedIndex;
    const waited = await replica.waitApplied(target, this.options.catchUpWaitMs);
    if (waited !== 'reached') {
      // Its feed stalled (nothing applied during the wait): follow again. A replica that is only
      // behind keeps its feed: a new one starts from a snapshot of the whole state, which costs
      // the member that sends it far more than the entries the replica is still working through.
      // Until it reaches the index it missed, reads go to the members without waiting for it.
      if (waited === 'timeout') {
        if (replica.appliedIndex === appliedBefore) replica.resync('applied nothing while a read waited');
        else this.behind = { index: target, applied: replica.appliedIndex, checkedAtMs: performance.now() };
      }
      return this.fallback(entry, serializable, signal);
    }
    if (signal?.aborted) throw wireError('Canceled');
    const request = entry.request;
    // A token newer than the replica's auth store (an auth change, AuthEnable included, that the
    // replica has not applied yet): the members know the caller's current rights.
    if (request.header.authRevision > replica.authRevision) return this.fallback(entry, serializable, signal);
    return this.local(request) ?? this.fallback(entry, serializable, signal);
  }

  /**
   * True while the replica is still short of the index a read missed. Checked at most every
   * catchUpWaitMs: a replica that applied nothing since the last check has a stalled feed and
   * follows again.
   */
  private stillBehind(): boolean {
    const behind = this.behind;
    if (behind === undefined) return false;
    const { replica, catchUpWaitMs } = this.options;
    if (replica.appliedIndex >= behind.index) {
      this.behind = undefined;
      return false;
    }
    const now = performance.now();
    if (now - behind.checkedAtMs < catchUpWaitMs) return true;
    if (replica.appliedIndex === behind.applied) {
      this.behind = undefined;
      replica.resync('applied nothing while behind a read index');
      return true;
    }
    this.behind = { index: behind.index, applied: replica.appliedIndex, checkedAtMs: now };
    return true;
  }

  /** The answer from the replica's state, as a member would give it; undefined when it cannot. */
  private local(request: ApplyRequest): Buffer | undefined {
    const { replica } = this.options;
    const context = replica.context;
    if (context === undefined) return undefined;
    const result = replica.read(request);
    if (!result.ok) {
      // A member's answer with the same error: an unavailable one would be retried elsewhere.
      if (result.error.grpcCode === Status.UNAVAILABLE) return undefined;
      this.counts.local += 1;
      throw nodeWireError({ code: result.error.grpcCode, message: result.error.message });
    }
    this.counts.local += 1;
    const bytes = encodeApplyResponse(result.result, result.header.revision, context);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private async fallback(entry: ReadEntry, serializable: boolean, signal?: Cancellation): Promise<Buffer> {
    this.counts.fallback += 1;
    return this.options.cluster.read(entry.bytes(), serializable, signal);
  }
}
