// bcrypt verifications per second in process (libuv threadpool), at cost 4 and 10, with as many
// requests in flight as the threadpool has threads, and the single-request latency.
//   npx nx run auth-password-hashing:bench      (UV_THREADPOOL_SIZE=8 npx nx … to change the pool)
import { availableParallelism } from 'node:os';
import { utf8 } from '@ward/shared/bytes';
import { BcryptPasswordVerifier } from '../src/index';

const threadpoolSize = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);

async function measure(cost: number, inFlight: number, durationMs: number): Promise<{ perSecond: number; p50Ms: number; p99Ms: number }> {
  const verifier = new BcryptPasswordVerifier({ cost });
  const hash = await verifier.hash(utf8('benchmark password'));
  const latencies: number[] = [];
  const endAt = performance.now() + durationMs;
  const startedAt = performance.now();
  const lane = async (): Promise<void> => {
    while (performance.now() < endAt) {
      const t0 = performance.now();
      if (!(await verifier.verify(utf8('benchmark password'), hash))) throw new Error('verification failed');
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const elapsedS = (performance.now() - startedAt) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { perSecond: latencies.length / elapsedS, p50Ms: at(0.5), p99Ms: at(0.99) };
}

const rows: string[] = [];
for (const cost of [4, 10]) {
  for (const inFlight of [1, threadpoolSize]) {
    const r = await measure(cost, inFlight, cost === 4 ? 2000 : 4000);
    rows.push(`| ${cost} | ${inFlight} | ${r.perSecond.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} |`);
  }
}
console.log(`bcrypt verify in process — UV_THREADPOOL_SIZE=${threadpoolSize}, ${availableParallelism()} CPUs (shared machine: indicative)\n`);
console.log('| cost | in flight | verifies/s | p50 ms | p99 ms |');
console.log('|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
