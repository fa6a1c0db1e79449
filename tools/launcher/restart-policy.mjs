// What `npm start` (tools/start.mjs) does when one of its processes exits: pure functions, so the
// policy is tested without processes or clocks (tools/test/restart-policy.test.ts).

/** Restart backoff: 200 ms doubling to 10 s; a process up for 30 s counts as healthy again. */
export const RESTART_POLICY = Object.freeze({
  firstDelayMs: 200,
  maxDelayMs: 10_000,
  stableAfterMs: 30_000,
  /** Crashes in a row, each within stableAfterMs of its start, after which it is not restarted. */
  maxQuickCrashes: 8,
});

/** The line a raft-node prints before it exits 0 because it was removed from the cluster. */
export const REMOVED_MEMBER_TEXT = 'the member has been permanently removed from the cluster';

/**
 * Why a child exited, as the launcher sees it:
 * - `stopping`: the launcher is stopping everything (Ctrl-C, SIGTERM): expected.
 * - `removed`: a raft-node that exited 0 after saying it was removed from the cluster (etcdctl
 *   member remove): it must not be restarted, the others keep serving.
 * - `failed-to-start`: anything else before the launcher was ready (a port in use, a bad
 *   setting): restarting would not help, the launcher stops everything and points at the log.
 * - `crash`: anything else once ready (killed, crashed, exited by itself): restart it.
 */
export function classifyExit({ app, code, signal, saidRemoved, stopping, ready }) {
  if (stopping) return 'stopping';
  if (app === 'raft-node' && code === 0 && signal === null && saidRemoved) return 'removed';
  if (!ready) return 'failed-to-start';
  return 'crash';
}

/**
 * The decision after a crash. `quickCrashes` is how many crashes in a row so far each came
 * within `stableAfterMs` of their start; `uptimeMs` how long the crashed process ran.
 * Returns `{ action: 'restart', delayMs, quickCrashes }` or `{ action: 'give-up', quickCrashes }`.
 */
export function nextRestart(quickCrashes, uptimeMs, policy = RESTART_POLICY) {
  if (!Number.isInteger(quickCrashes) || quickCrashes < 0) throw new TypeError(`quickCrashes must be a non-negative integer, got ${quickCrashes}`);
  if (!Number.isFinite(uptimeMs) || uptimeMs < 0) throw new TypeError(`uptimeMs must be a non-negative number, got ${uptimeMs}`);
  const inARow = uptimeMs < policy.stableAfterMs ? quickCrashes + 1 : 1;
  if (inARow > policy.maxQuickCrashes) return { action: 'give-up', quickCrashes: inARow };
  return { action: 'restart', delayMs: Math.min(policy.firstDelayMs * 2 ** (inARow - 1), policy.maxDelayMs), quickCrashes: inARow };
}
