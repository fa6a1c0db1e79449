// Taking a snapshot of a large state in turns: the task's steps for at most `turnMs`, then the
// event loop's other work (Readies, requests, heartbeats), then the next turn. The tasks
// themselves (state-machine.ts, @ward/etcd/apply, @ward/etcd/kv-store) do no I/O and keep no time.
import { SNAPSHOT_CHUNK_BYTES, type SnapshotStepResult } from '@ward/etcd/kv-store';

/** Longest one turn of taking a snapshot holds the event loop. */
export const SNAPSHOT_TURN_MS = 10;

/**
 * Runs `step` in turns until it reports 'done' or 'stale', or `dropped()` says the snapshot is no
 * longer wanted (checked before every turn). A step that throws rejects.
 */
export function takeInTurns(step: () => SnapshotStepResult, dropped: () => boolean, turnMs = SNAPSHOT_TURN_MS): Promise<'done' | 'stale' | 'dropped'> {
  return new Promise((resolve, reject) => {
    const turn = (): void => {
      if (dropped()) return resolve('dropped');
      let result: SnapshotStepResult;
      try {
        result = oneTurn(step, turnMs);
      } catch (error) {
        return reject(error);
      }
      if (result === 'more') setImmediate(turn);
      else resolve(result);
    };
    setImmediate(turn);
  });
}

/**
 * Runs `step` for at most `turnMs` (at least once), or until `enough()` says to stop early (checked
 * after each step); returns the last step's result.
 */
export function oneTurn(step: () => SnapshotStepResult, turnMs = SNAPSHOT_TURN_MS, enough: () => boolean = () => false): SnapshotStepResult {
  const until = performance.now() + turnMs;
  let result: SnapshotStepResult;
  do result = step();
  while (result === 'more' && !enough() && performance.now() < until);
  return result;
}

/** Most bytes of a streamed snapshot encoded in one turn before they are written. */
export const SNAPSHOT_TURN_BYTES = 8 * SNAPSHOT_CHUNK_BYTES;

/** Why a streamed snapshot was given up while it was written. */
export class SnapshotGivenUp extends Error {
  constructor(readonly reason: 'dropped' | 'stale') {
    super(`local snapshot given up: ${reason}`);
  }
}

/**
 * The buffers a streamed snapshot is encoded into: those written already are taken again, so a
 * large state is encoded into a few MiB of memory touched once, not into fresh memory as large as
 * the state. One pool per snapshot, dropped with it.
 */
export class ChunkPool {
  private readonly free: Uint8Array[] = [];
  private readonly lent = new WeakSet<ArrayBufferLike>();

  take(): Uint8Array {
    const buffer = this.free.pop() ?? new Uint8Array(SNAPSHOT_CHUNK_BYTES);
    this.lent.add(buffer.buffer);
    return buffer;
  }

  /** Gives back the buffer of a chunk once written (chunks of other buffers are ignored). */
  give(chunk: Uint8Array): void {
    if (!this.lent.has(chunk.buffer)) return;
    this.lent.delete(chunk.buffer);
    this.free.push(new Uint8Array(chunk.buffer, 0, SNAPSHOT_CHUNK_BYTES));
  }
}

/** A snapshot task that streams (NodeSnapshotTask made with SnapshotStreamOptions). */
export interface StreamedSnapshotTask {
  step(): SnapshotStepResult;
  takeChunks(): Uint8Array[];
  /** The length, once sized. */
  readonly sizeBytes: number | undefined;
}

/**
 * Runs a streamed task's sizing pass in turns (takeInTurns): 'done' once its length is known
 * (nothing written yet), else 'stale' or 'dropped' as takeInTurns ends.
 */
export function sizeInTurns(task: StreamedSnapshotTask, dropped: () => boolean, turnMs = SNAPSHOT_TURN_MS): Promise<'done' | 'stale' | 'dropped'> {
  return takeInTurns(
    () => {
      const result = task.step();
      return result === 'more' && task.sizeBytes !== undefined ? 'done' : result;
    },
    dropped,
    turnMs,
  );
}

/**
 * A streamed snapshot task and the pool its buffers come from, made together (at the moment the
 * state is taken): sized in turns, then its bytes a turn at a time through that pool.
 */
export class PooledSnapshot<T extends StreamedSnapshotTask> {
  private readonly pool = new ChunkPool();
  readonly task: T;

  constructor(take: (stream: { nextBuffer(): Uint8Array }) => T) {
    this.task = take({ nextBuffer: () => this.pool.take() });
  }

  /** sizeInTurns of the task. */
  size(dropped: () => boolean): Promise<'done' | 'stale' | 'dropped'> {
    return sizeInTurns(this.task, dropped);
  }

  /** snapshotPieces of the task, once sized. */
  pieces(dropped: () => boolean): AsyncGenerator<Uint8Array> {
    return snapshotPieces(this.task, this.pool, dropped);
  }
}

/**
 * The bytes of a streamed snapshot task whose length is known (sized), made a turn at a time:
 * each turn's chunks (at most about SNAPSHOT_TURN_BYTES, encoded into `pool`'s buffers) are
 * handed out, and the next turn runs once the consumer asks for more, when they are written and
 * their buffers go back to the pool. Throws SnapshotGivenUp when `dropped()` (checked before each
 * turn) or when the task goes stale.
 */
export async function* snapshotPieces(task: StreamedSnapshotTask, pool: ChunkPool, dropped: () => boolean, turnMs = SNAPSHOT_TURN_MS): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const collect = (): boolean => {
    for (const chunk of task.takeChunks()) {
      pending.push(chunk);
      pendingBytes += chunk.length;
    }
    return pendingBytes >= SNAPSHOT_TURN_BYTES;
  };
  for (;;) {
    if (dropped()) throw new SnapshotGivenUp('dropped');
    const result = oneTurn(() => task.step(), turnMs, collect);
    collect();
    if (result === 'stale') throw new SnapshotGivenUp('stale');
    const chunks = pending;
    pending = [];
    pendingBytes = 0;
    // Each chunk is written before the next is asked for: its buffer is free again then.
    for (const chunk of chunks) {
      yield chunk;
      pool.give(chunk);
    }
    if (result === 'done') return;
    if (chunks.length === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}
