import { DEFAULT_BACKOFF, checkBackoff, type BackoffOptions } from './backoff';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';

/** Limits of the transport; every queue and frame is bounded. */
export interface TransportLimits {
  /** Messages waiting for one peer; more are dropped (and counted). Default 4,096. */
  readonly maxQueuedMessages: number;
  /** Bytes waiting for one peer; more are dropped. Default 64 MiB. */
  readonly maxQueuedBytes: number;
  /**
   * A message still queued this long after it was sent (its peer was down or slow) is dropped
   * instead of delivered late. Default 1,000 ms (an election timeout): Raft resends what still
   * matters, while a backlog does harm (see PeerSender).
   */
  readonly maxQueuedAgeMs: number;
  /** Largest single message, sent or received. Default 16 MiB. */
  readonly maxMessageBytes: number;
  /** Messages per batch frame. Default 512. */
  readonly maxBatchMessages: number;
  /** Payload bytes per batch frame (a single larger message still travels alone). Default 1 MiB. */
  readonly maxBatchBytes: number;
  /** Largest snapshot sent or received. Default MAX_SNAPSHOT_BYTES (@ward/raft/core), the snapshot store's bound. */
  readonly maxSnapshotBytes: number;
  /** Snapshot data per chunk frame. Default 1 MiB. */
  readonly snapshotChunkBytes: number;
  /** Snapshot metadata (the encoded snapshot message without its data). Default 1 MiB. */
  readonly maxSnapshotMetadataBytes: number;
  /** Snapshots being received at once; more are refused with RESOURCE_EXHAUSTED. Default 2. */
  readonly maxInboundSnapshots: number;
  /** Deadline of one snapshot transfer. Default 10 minutes. */
  readonly snapshotTimeoutMs: number;
}

export const DEFAULT_LIMITS: TransportLimits = Object.freeze({
  maxQueuedMessages: 4096,
  maxQueuedBytes: 64 * 1024 * 1024,
  maxQueuedAgeMs: 1000,
  maxMessageBytes: 16 * 1024 * 1024,
  maxBatchMessages: 512,
  maxBatchBytes: 1024 * 1024,
  maxSnapshotBytes: MAX_SNAPSHOT_BYTES,
  snapshotChunkBytes: 1024 * 1024,
  maxSnapshotMetadataBytes: 1024 * 1024,
  maxInboundSnapshots: 2,
  snapshotTimeoutMs: 10 * 60 * 1000,
});

/** Channel keepalive: how a silently dead peer connection is found. */
export interface KeepaliveOptions {
  readonly timeMs: number;
  readonly timeoutMs: number;
}

export const DEFAULT_KEEPALIVE: KeepaliveOptions = Object.freeze({ timeMs: 10_000, timeoutMs: 5_000 });

/** Frame bytes a receiver must accept: the largest message batch or snapshot chunk, plus headers. */
export function maxFrameBytes(limits: TransportLimits): number {
  return Math.max(limits.maxBatchBytes, limits.maxMessageBytes, limits.snapshotChunkBytes, limits.maxSnapshotMetadataBytes) + 64 * 1024;
}

export function resolveLimits(limits: Partial<TransportLimits> | undefined): TransportLimits {
  const resolved = { ...DEFAULT_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`transport limit ${name} must be a positive integer, got ${value}`);
  }
  if (resolved.maxMessageBytes > resolved.maxQueuedBytes) throw new TypeError('transport limit maxMessageBytes must not exceed maxQueuedBytes');
  if (maxFrameBytes(resolved) > 256 * 1024 * 1024) throw new TypeError('transport frames must stay under 256 MiB');
  return resolved;
}

export function resolveBackoff(backoff: Partial<BackoffOptions> | undefined): BackoffOptions {
  return checkBackoff({ ...DEFAULT_BACKOFF, ...backoff });
}
