import type { Clock } from '@ward/shared/clock';
import type { Logger } from '@ward/platform/logging';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { Job } from '@ward/platform/redis-queue';

export interface JobInstruments {
  readonly log: Logger;
  readonly clock: Clock;
  readonly jobs: Counter<'name' | 'outcome'>;
  readonly durations: Histogram<'name'>;
  readonly inFlight: Gauge;
}

/** Job names as metric labels: the two real ones, anything else lumped (labels stay bounded). */
function labelOf(name: string): string {
  return name === 'verify' || name === 'hash' ? name : 'other';
}

/**
 * Wraps the processor with a log line per job (jobId and name; never data or results) and
 * metrics. Refusals are logged with their code only.
 */
export function instrumentedProcessor<R>(process: (job: Job<unknown, R, string>) => Promise<R>, instruments: JobInstruments) {
  return async (job: Job<unknown, R, string>): Promise<R> => {
    const name = labelOf(job.name);
    const log = instruments.log.child({ jobId: job.id, name });
    const startedMs = instruments.clock.monotonicMs();
    instruments.inFlight.inc();
    log.debug({ attempt: job.attemptsStarted }, 'password job started');
    try {
      const result = await process(job);
      instruments.jobs.inc({ name, outcome: 'completed' });
      log.debug({ durationMs: Math.round(instruments.clock.monotonicMs() - startedMs) }, 'password job completed');
      return result;
    } catch (error) {
      const code = error instanceof Error ? (error.message.split(':', 1)[0] ?? 'error') : 'error';
      instruments.jobs.inc({ name, outcome: /^ERR_[A-Z_]+$/.test(code) ? code : 'error' });
      log.warn({ code: /^ERR_[A-Z_]+$/.test(code) ? code : 'error' }, 'password job failed');
      throw error;
    } finally {
      instruments.inFlight.dec();
      instruments.durations.observe({ name }, (instruments.clock.monotonicMs() - startedMs) / 1000);
    }
  };
}
