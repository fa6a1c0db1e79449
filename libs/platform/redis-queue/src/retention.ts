import type { KeepJobs } from 'bullmq';

/** How many finished jobs Redis keeps, by age and count (both bounded). */
export interface JobRetention {
  readonly ageSeconds: number;
  readonly count: number;
}

/** `true` removes at once; otherwise keep at most `count` jobs, none older than `ageSeconds`. */
export type JobRemoval = true | JobRetention;

export function toKeepJobs(removal: JobRemoval): true | KeepJobs {
  if (removal === true) return true;
  if (!Number.isSafeInteger(removal.ageSeconds) || removal.ageSeconds <= 0 || !Number.isSafeInteger(removal.count) || removal.count < 0) {
    throw new TypeError('job retention: ageSeconds must be positive and count non-negative integers');
  }
  return { age: removal.ageSeconds, count: removal.count };
}

/** The Worker-option form (KeepJobs only): `true` is `{ count: 0 }`, keep none. */
export function toWorkerKeepJobs(removal: JobRemoval): KeepJobs {
  const keep = toKeepJobs(removal);
  return keep === true ? { count: 0 } : keep;
}
