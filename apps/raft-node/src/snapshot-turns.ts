// Taking a snapshot of a large state in turns: the task's steps for at most `turnMs`, then the
// event loop's other work (Readies, requests, heartbeats), then the next turn. The tasks
// themselves (state-machine.ts, @ward/etcd/apply, @ward/etcd/kv-store) do no I/O and keep no time.
import type { SnapshotStepResult } from '@ward/etcd/kv-store';

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
        const until = performance.now() + turnMs;
        do result = step();
        while (result === 'more' && performance.now() < until);
      } catch (error) {
        return reject(error);
      }
      if (result === 'more') setImmediate(turn);
      else resolve(result);
    };
    setImmediate(turn);
  });
}
