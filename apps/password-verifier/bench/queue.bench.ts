// bcrypt verifications per second through BullMQ (Redis on 127.0.0.1:6379) with 1 and 2
// password-verifier processes, at cost 4 and 10, against the in-process figure on the same machine.
//   npx nx run password-verifier:bench
import { utf8 } from '@ward/shared/bytes';
import { BcryptPasswordVerifier } from '@ward/auth/password-hashing';
import { PayloadSealer, QueuePasswordVerifier, generateSealingKeyEntry, parseSealingKeys } from '@ward/auth/password-queue';
import { systemClock } from '@ward/shared/clock';
import { connectTestRedis, deleteKeys, testRedisOptions, uniquePrefix } from '@ward/testing/redis';
import { startVerifierProcess, started, type VerifierProcess } from '../test/verifier-process';

const IN_FLIGHT = 16;
const CONCURRENCY_PER_WORKER = 4;
const keyRing = generateSealingKeyEntry('bench');
const redis = connectTestRedis('password-bench');

interface Figures {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function drive(verify: () => Promise<boolean>, durationMs: number): Promise<Figures> {
  const latencies: number[] = [];
  const startedAt = performance.now();
  const endAt = startedAt + durationMs;
  const lane = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const t0 = performance.now();
      if (!(await verify())) throw new Error('verification failed');
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { perSecond: latencies.length / ((performance.now() - startedAt) / 1000), p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function throughQueue(cost: number, workers: number, durationMs: number): Promise<Figures> {
  const prefix = uniquePrefix('bench');
  const processes: VerifierProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) {
      processes.push(
        startVerifierProcess({
          VERIFIER_PAYLOAD_KEYS: keyRing,
          VERIFIER_QUEUE_PREFIX: prefix,
          VERIFIER_HTTP_PORT: '0',
          VERIFIER_BCRYPT_COST: String(cost),
          VERIFIER_CONCURRENCY_COUNT: String(CONCURRENCY_PER_WORKER),
          VERIFIER_LOG_LEVEL: 'info',
          VERIFIER_WORKER_NAME: `bench-${i}`,
        }),
      );
    }
    await Promise.all(processes.map((p) => p.waitForLine(started, 60_000)));
    const client = await QueuePasswordVerifier.create({
      queueName: 'password',
      prefix,
      connection: testRedisOptions('password-bench-client'),
      sealer: new PayloadSealer(parseSealingKeys(keyRing)),
      requestTimeoutMs: 60_000,
      maxOutstanding: IN_FLIGHT,
      attempts: 1,
      backoffDelayMs: 10,
      failedRetention: { ageSeconds: 60, count: 10 },
      eventsMaxLenCount: 10_000,
      clock: systemClock,
    });
    try {
      const hash = await client.hash(utf8('benchmark password'));
      await drive(() => client.verify(utf8('benchmark password'), hash), 1000); // warm-up
      return await drive(() => client.verify(utf8('benchmark password'), hash), durationMs);
    } finally {
      await client.close();
    }
  } finally {
    for (const p of processes) p.signal('SIGTERM');
    await Promise.all(processes.map((p) => p.exited));
    await deleteKeys(redis, `${prefix}:*`);
  }
}

async function inProcess(cost: number, durationMs: number): Promise<Figures> {
  const verifier = new BcryptPasswordVerifier({ cost });
  const hash = await verifier.hash(utf8('benchmark password'));
  return drive(() => verifier.verify(utf8('benchmark password'), hash), durationMs);
}

const rows: string[] = [];
const row = (cost: number, where: string, f: Figures): number => rows.push(`| ${cost} | ${where} | ${f.perSecond.toFixed(1)} | ${f.p50Ms.toFixed(1)} | ${f.p99Ms.toFixed(1)} |`);
for (const cost of [4, 10]) {
  const durationMs = cost === 4 ? 4000 : 10_000;
  row(cost, 'in process (UV_THREADPOOL_SIZE=4)', await inProcess(cost, durationMs));
  row(cost, 'BullMQ, 1 worker process', await throughQueue(cost, 1, durationMs));
  row(cost, 'BullMQ, 2 worker processes', await throughQueue(cost, 2, durationMs));
}
await redis.quit();
console.log(`bcrypt verify — ${IN_FLIGHT} requests in flight, ${CONCURRENCY_PER_WORKER} jobs per worker, UV_THREADPOOL_SIZE=4 everywhere (shared machine: indicative)\n`);
console.log('| cost | where | verifies/s | p50 ms | p99 ms |');
console.log('|---:|---|---:|---:|---:|');
for (const line of rows) console.log(line);
