import { FRAME_OVERHEAD_BYTES, frameSizeBytes } from './frame';

/**
 * How a new segment's space is reserved. `zeros` writes the whole file once (in the background)
 * so later fdatasyncs flush only data, not block allocations: on ext4 here a 4 KiB write +
 * fdatasync measured ~0.11 ms into zeroed space, ~0.16-0.25 ms into a sparse file and ~0.17 ms
 * when appending. `sparse` sets the size with ftruncate; `none` grows the file by appending.
 */
export type Preallocation = 'zeros' | 'sparse' | 'none';

/** Observers of the disk; `beforeSync` may delay a sync (tests model a slow disk or a crash point). */
export interface WalHooks {
  /** Runs before every fdatasync of a segment; an async hook delays it. */
  readonly beforeSync?: (file: string) => void | Promise<void>;
  /** Runs after every fdatasync of a segment with its duration. */
  readonly afterSync?: (file: string, durationMs: number) => void;
}

export interface WalOptions {
  /** Directory of the segment files; created when missing. */
  readonly dir: string;
  /**
   * Identity written into every segment (for example cluster and member id). A new log is created
   * with it; an existing log must carry exactly these bytes or opening fails.
   */
  readonly metadata: Uint8Array;
  /** A segment is cut once the next write would pass this size. Default 64 MiB. */
  readonly segmentSizeBytes?: number;
  readonly preallocation?: Preallocation;
  /** Largest record payload (an entry's data plus 17 bytes). Default 8 MiB. */
  readonly maxRecordBytes?: number;
  /**
   * Most bytes written by one write + fdatasync. Also the most bytes ever written since the last
   * completed sync, which is how boot tells a torn tail from corruption. Default 16 MiB.
   */
  readonly maxBatchBytes?: number;
  /** Most bytes waiting for the disk; appends beyond it fail with WalQueueFullError. Default 64 MiB. */
  readonly maxQueuedBytes?: number;
  readonly hooks?: WalHooks;
}

export interface ResolvedWalOptions {
  readonly dir: string;
  readonly metadata: Uint8Array;
  readonly segmentSizeBytes: number;
  readonly preallocation: Preallocation;
  readonly maxRecordBytes: number;
  readonly maxBatchBytes: number;
  readonly maxQueuedBytes: number;
  readonly hooks: WalHooks;
  /** Bytes an unsynced write may span at boot: a batch plus a segment header. */
  readonly tornWindowBytes: number;
}

export const WAL_LIMITS = Object.freeze({
  defaultSegmentSizeBytes: 64 * 1024 * 1024,
  minSegmentSizeBytes: 4096,
  maxSegmentSizeBytes: 1024 * 1024 * 1024,
  defaultMaxRecordBytes: 8 * 1024 * 1024,
  defaultMaxBatchBytes: 16 * 1024 * 1024,
  defaultMaxQueuedBytes: 64 * 1024 * 1024,
  maxMetadataBytes: 64 * 1024,
});

/** Bytes of the header records a segment starts with, at most, for metadata of this size. */
export function segmentHeaderMaxBytes(metadataBytes: number): number {
  return frameSizeBytes(4) + frameSizeBytes(metadataBytes) + frameSizeBytes(17) + frameSizeBytes(24);
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`WalOptions.${name} must be a positive integer, got ${value}`);
  return value;
}

/** Fills defaults and checks limits and their relations; throws TypeError on misuse. */
export function resolveWalOptions(options: WalOptions): ResolvedWalOptions {
  if (typeof options.dir !== 'string' || options.dir.length === 0) throw new TypeError('WalOptions.dir must be a non-empty path');
  if (!(options.metadata instanceof Uint8Array)) throw new TypeError('WalOptions.metadata must be a Uint8Array');
  if (options.metadata.length > WAL_LIMITS.maxMetadataBytes) throw new TypeError(`WalOptions.metadata must be at most ${WAL_LIMITS.maxMetadataBytes} bytes`);
  const segmentSizeBytes = positiveInteger('segmentSizeBytes', options.segmentSizeBytes ?? WAL_LIMITS.defaultSegmentSizeBytes);
  if (segmentSizeBytes < WAL_LIMITS.minSegmentSizeBytes || segmentSizeBytes > WAL_LIMITS.maxSegmentSizeBytes || segmentSizeBytes % 8 !== 0) {
    throw new TypeError(`WalOptions.segmentSizeBytes must be a multiple of 8 in [${WAL_LIMITS.minSegmentSizeBytes}, ${WAL_LIMITS.maxSegmentSizeBytes}]`);
  }
  const maxRecordBytes = positiveInteger('maxRecordBytes', options.maxRecordBytes ?? Math.min(WAL_LIMITS.defaultMaxRecordBytes, segmentSizeBytes / 4));
  const maxBatchBytes = positiveInteger('maxBatchBytes', options.maxBatchBytes ?? Math.max(WAL_LIMITS.defaultMaxBatchBytes, frameSizeBytes(maxRecordBytes)));
  const maxQueuedBytes = positiveInteger('maxQueuedBytes', options.maxQueuedBytes ?? Math.max(WAL_LIMITS.defaultMaxQueuedBytes, maxBatchBytes));
  const headerBytes = segmentHeaderMaxBytes(options.metadata.length);
  if (frameSizeBytes(maxRecordBytes) + headerBytes > segmentSizeBytes) {
    throw new TypeError(`WalOptions.maxRecordBytes (${maxRecordBytes}) plus a segment header must fit in segmentSizeBytes (${segmentSizeBytes})`);
  }
  if (frameSizeBytes(maxRecordBytes) > maxBatchBytes) throw new TypeError('WalOptions.maxBatchBytes must hold at least one record of maxRecordBytes');
  if (maxQueuedBytes < maxBatchBytes) throw new TypeError('WalOptions.maxQueuedBytes must be at least maxBatchBytes');
  const preallocation = options.preallocation ?? 'zeros';
  if (!['zeros', 'sparse', 'none'].includes(preallocation)) throw new TypeError(`WalOptions.preallocation must be zeros, sparse or none, got ${String(preallocation)}`);
  return {
    dir: options.dir,
    metadata: options.metadata,
    segmentSizeBytes,
    preallocation,
    maxRecordBytes,
    maxBatchBytes,
    maxQueuedBytes,
    hooks: options.hooks ?? {},
    tornWindowBytes: maxBatchBytes + headerBytes + FRAME_OVERHEAD_BYTES,
  };
}
