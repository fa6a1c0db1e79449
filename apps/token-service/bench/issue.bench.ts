// Issue/s of one token-service in front of three real raft-node processes (bcrypt cost 10, in
// process): bcrypt-bound, like Authenticate (docs/benchmarks.md has etcd 3.4.23's Authenticate/s
// on the same kind of setup). 1 and 16 callers. Figures are indicative on a shared machine.
//   npx nx run token-service:bench
import { EtcdGrpcClient, setupAuth, startWardCluster } from '@ward/testing/etcd-harness';
import { createLogger } from '@ward/platform/logging';
import { createTokenService, tokenServiceConfig } from '../src/index';
import { TokenTestClient } from '../test/support';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 5000);

const ward = await startWardCluster({ bcryptCost: 10 });
const admin = new EtcdGrpcClient(ward.clientEndpoint);
await setupAuth(admin, { users: [{ name: 'bench', password: 'bench-password' }], enable: false });
await admin.call('Auth', 'AuthEnable', {});
admin.close();
const service = await createTokenService(tokenServiceConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [...ward.nodeApiEndpoints], bcryptCost: 10 }), {
  logger: createLogger({ name: 'bench', level: 'silent' }),
});
const rows: string[] = [];
try {
  for (const callers of [1, 16]) {
    const clients = Array.from({ length: callers }, () => new TokenTestClient(service.grpcAddress));
    const latencies: number[] = [];
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() - t0 < DURATION_MS) {
          const started = performance.now();
          const outcome = await client.issue('bench', 'bench-password');
          if (outcome.ok) latencies.push(performance.now() - started);
          else errors += 1;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const p = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    rows.push(`| ${callers} | ${(latencies.length / seconds).toFixed(1)} | ${p(0.5).toFixed(1)} | ${p(0.99).toFixed(1)} | ${errors} |`);
    for (const client of clients) client.close();
  }
} finally {
  await service.stop();
  await ward.stop();
}
console.log(`token-service Issue, bcrypt cost 10 in process (UV_THREADPOOL_SIZE=4), ${DURATION_MS} ms per row\n`);
console.log('| callers | issues/s | p50 ms | p99 ms | errors |');
console.log('|---:|---:|---:|---:|---:|');
for (const line of rows) console.log(line);
