// The bench's Authenticate-flood scenario (issue 17): KV put p99 idle and while 40 clients call
// Authenticate in a loop with a wrong password, and a legitimate user's login latency during the
// flood, for etcd 3.4.23 (no defence) and ward (admission control, fair queue, failure throttle).
// The attacker dials from 127.0.0.2 through a forwarder (its own client address, as an attacker
// has), the KV clients and the legitimate user from 127.0.0.1.
import { connect, createServer, type Socket } from 'node:net';
import { EtcdGrpcClient, percentile, runLoad, type LoadOperation, type Target } from '../src/index';

export interface AuthFloodOptions {
  readonly durationMs: number;
  readonly attackerClients: number;
  readonly kvClients: number;
  /** The user whose name the attacker guesses, and the legitimate user (with their password). */
  readonly attacked: string;
  readonly legitimate: { readonly name: string; readonly password: string };
  readonly put: LoadOperation;
}

export interface AuthFloodResult {
  readonly kvIdleP99Ms: number;
  readonly kvFloodP99Ms: number;
  readonly kvIdleOpsPerSecond: number;
  readonly kvFloodOpsPerSecond: number;
  readonly loginIdleMedianMs: number;
  readonly loginFloodMedianMs: number;
  readonly loginFloodP99Ms: number;
  readonly loginFloodFailures: number;
  /** Password checks the attacker got (answered `authentication failed`) per second. */
  readonly attackerChecksPerSecond: number;
  /** Attempts refused without a check (`too many requests`) per second. */
  readonly attackerRefusedPerSecond: number;
}

async function forwarder(endpoint: string, localAddress: string): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const [host, port] = [endpoint.slice(0, endpoint.lastIndexOf(':')), Number(endpoint.slice(endpoint.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect({ host, port, localAddress });
    sockets.add(inbound).add(outbound);
    const drop = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

/** Sequential logins, `gapMs` apart, for `durationMs`: their latencies and failures. */
async function logins(client: EtcdGrpcClient, user: { name: string; password: string }, durationMs: number, gapMs: number): Promise<{ ms: number[]; failures: number }> {
  const ms: number[] = [];
  let failures = 0;
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const started = performance.now();
    const outcome = await client.call('Auth', 'Authenticate', { name: user.name, password: user.password });
    if (outcome.ok) ms.push(performance.now() - started);
    else failures += 1;
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return { ms, failures };
}

const sorted = (samples: readonly number[]): Float64Array => Float64Array.from(samples).sort();

export async function measureAuthFlood(target: Target, options: AuthFloodOptions): Promise<AuthFloodResult> {
  const kv = (): ReturnType<typeof runLoad> =>
    runLoad({ endpoint: target.clientEndpoint, concurrency: options.kvClients, durationMs: options.durationMs, warmupOperations: 20, credentials: options.legitimate, operation: options.put, serverProcesses: target.serverProcesses() });
  const legit = new EtcdGrpcClient(target.clientEndpoint);
  const attackerPath = await forwarder(target.clientEndpoint, '127.0.0.2');
  const attackers = Array.from({ length: options.attackerClients }, () => new EtcdGrpcClient(attackerPath.endpoint));
  try {
    const [idleKv, idleLogins] = await Promise.all([kv(), logins(legit, options.legitimate, options.durationMs, 300)]);
    let running = true;
    let checked = 0;
    let refused = 0;
    const floodStarted = performance.now();
    const loops = attackers.map(async (client, i) => {
      for (let n = 0; running; n++) {
        const outcome = await client.call('Auth', 'Authenticate', { name: options.attacked, password: `guess-${i}-${n}` });
        if (!outcome.ok && outcome.code === 3) checked += 1;
        else if (!outcome.ok && outcome.code === 8) refused += 1;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const [floodKv, floodLogins] = await Promise.all([kv(), logins(legit, options.legitimate, options.durationMs, 300)]);
    running = false;
    await Promise.all(loops);
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    return {
      kvIdleP99Ms: idleKv.p99Ms,
      kvFloodP99Ms: floodKv.p99Ms,
      kvIdleOpsPerSecond: idleKv.operationsPerSecond,
      kvFloodOpsPerSecond: floodKv.operationsPerSecond,
      loginIdleMedianMs: percentile(sorted(idleLogins.ms), 0.5),
      loginFloodMedianMs: percentile(sorted(floodLogins.ms), 0.5),
      loginFloodP99Ms: percentile(sorted(floodLogins.ms), 0.99),
      loginFloodFailures: floodLogins.failures,
      attackerChecksPerSecond: checked / floodSeconds,
      attackerRefusedPerSecond: refused / floodSeconds,
    };
  } finally {
    for (const client of attackers) client.close();
    legit.close();
    await attackerPath.close();
  }
}

/** The page's `## Authenticate flood` section. */
export function authFloodSection(results: ReadonlyMap<string, AuthFloodResult>, options: Omit<AuthFloodOptions, 'put' | 'legitimate' | 'attacked'>): string {
  const f = (value: number): string => (Number.isFinite(value) ? value.toFixed(1) : 'n/a');
  const rows = [
    '| system | KV put p99 idle (ms) | KV put p99 under flood (ms) | ratio | KV ops/s idle → flood | login median idle → flood (ms) | login p99 under flood (ms) | failed logins | attacker checks/s | refused/s |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, r] of results) {
    rows.push(
      `| ${name} | ${f(r.kvIdleP99Ms)} | ${f(r.kvFloodP99Ms)} | ${(r.kvFloodP99Ms / r.kvIdleP99Ms).toFixed(2)}× | ${r.kvIdleOpsPerSecond.toFixed(0)} → ${r.kvFloodOpsPerSecond.toFixed(0)} | ${f(r.loginIdleMedianMs)} → ${f(r.loginFloodMedianMs)} | ${f(r.loginFloodP99Ms)} | ${r.loginFloodFailures} | ${f(r.attackerChecksPerSecond)} | ${f(r.attackerRefusedPerSecond)} |`,
    );
  }
  return `## Authenticate flood

${options.attackerClients} clients call Authenticate in a loop with a wrong password (from their own
client address, 127.0.0.2) while ${options.kvClients} clients put as another user, ${options.durationMs / 1000} s idle
then ${options.durationMs / 1000} s under the flood; meanwhile the other user logs in every 300 ms.
etcd 3.4.23 has no defence; ward answers with its admission control (GATEWAY_AUTH_*: throttle per
address and per user, fair queue, bounded in-flight checks), at its defaults.
Selected by \`BENCH_WORKLOADS=auth-flood\` (included when no selection is given).

${rows.join('\n')}
`;
}
