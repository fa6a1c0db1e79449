import { EtcdGrpcClient, type GrpcOutcome } from './grpc-client';
import { processActivity, processCpuMicros, type ProcessActivity } from './process-cpu';
import type { ServerProcess } from './target';

/** Latency samples kept per run (enough for a p99 over minutes of load at bench rates). */
const MAX_SAMPLES = 2_000_000;
/** Consecutive errors on one client that abort the run: a broken target, not a measurement. */
const MAX_CONSECUTIVE_ERRORS = 100;

/** One operation of a load run: client `clientIndex` performs its `sequence`-th operation. */
export type LoadOperation = (
  client: EtcdGrpcClient,
  context: { readonly clientIndex: number; readonly sequence: number; readonly token: string | undefined },
) => Promise<GrpcOutcome<unknown>>;

export interface LoadOptions {
  readonly endpoint: string;
  /** Concurrent clients, each with its own connection, each running operations back to back. */
  readonly concurrency: number;
  readonly durationMs: number;
  /** Operations run but not measured first, per client (connections, JIT, caches). */
  readonly warmupOperations?: number;
  /** Each client authenticates once with these credentials and sends the token on every call. */
  readonly credentials?: { readonly name: string; readonly password: string };
  readonly operation: LoadOperation;
  /** Server processes whose CPU time over the measured window is reported. */
  readonly serverProcesses?: readonly ServerProcess[];
}

export interface LoadResult {
  readonly concurrency: number;
  readonly operations: number;
  readonly errors: number;
  /** The first error seen, for the report. */
  readonly firstError?: string;
  readonly elapsedMs: number;
  readonly operationsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU each server process used during the measured window, µs, by process name. */
  readonly serverCpuMicros: ReadonlyMap<string, number>;
  /** System calls and wake-ups of each server process during the measured window, by process name. */
  readonly serverActivity: ReadonlyMap<string, ProcessActivity>;
  /** CPU this process (the load generator) used during the measured window, µs. */
  readonly clientCpuMicros: number;
}

/**
 * A closed-loop load generator: `concurrency` clients each issue one request, wait for the answer,
 * and issue the next, for `durationMs`. The same code drives etcd and ward, so the two are
 * measured alike. Latency is measured per operation with a monotonic clock.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > 1024) {
    throw new RangeError(`runLoad: concurrency must be 1..1024, got ${options.concurrency}`);
  }
  const clients = Array.from({ length: options.concurrency }, () => new EtcdGrpcClient(options.endpoint));
  try {
    const tokens = await loginAll(clients, options.credentials);
    const warmup = options.warmupOperations ?? 20;
    await Promise.all(
      clients.map(async (client, clientIndex) => {
        for (let sequence = 0; sequence < warmup; sequence++) {
          await options.operation(client, { clientIndex, sequence: -1 - sequence, token: tokens[clientIndex] });
        }
      }),
    );
    return await measure(options, clients, tokens);
  } finally {
    for (const client of clients) client.close();
  }
}

/** Logins at most this many at a time: bcrypt is slow by design and servers time out under a burst. */
const LOGIN_CONCURRENCY = 4;
const LOGIN_ATTEMPTS = 3;

async function loginAll(clients: EtcdGrpcClient[], credentials: LoadOptions['credentials']): Promise<(string | undefined)[]> {
  const tokens: (string | undefined)[] = clients.map(() => undefined);
  if (credentials === undefined) return tokens;
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < clients.length; index = next++) {
      for (let attempt = 1; tokens[index] === undefined; attempt++) {
        const outcome = await (clients[index] as EtcdGrpcClient).call<{ token: string }>('Auth', 'Authenticate', { ...credentials });
        if (outcome.ok) tokens[index] = outcome.response.token;
        else if (attempt >= LOGIN_ATTEMPTS || (outcome.code !== 14 && outcome.code !== 4)) {
          throw new Error(`runLoad: login failed: code ${outcome.code} ${outcome.details}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOGIN_CONCURRENCY, clients.length) }, worker));
  return tokens;
}

async function measure(options: LoadOptions, clients: EtcdGrpcClient[], tokens: (string | undefined)[]): Promise<LoadResult> {
  const samples = new Float64Array(MAX_SAMPLES);
  let sampleCount = 0;
  let operations = 0;
  let errors = 0;
  let firstError: string | undefined;
  const servers = options.serverProcesses ?? [];
  const serverCpuBefore = servers.map((server) => processCpuMicros(server.pid));
  const serverActivityBefore = servers.map((server) => processActivity(server.pid));
  const clientCpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(options.durationMs) * 1_000_000n;
  await Promise.all(
    clients.map(async (client, clientIndex) => {
      let consecutiveErrors = 0;
      for (let sequence = 0; process.hrtime.bigint() < deadline; sequence++) {
        const before = process.hrtime.bigint();
        const outcome = await options.operation(client, { clientIndex, sequence, token: tokens[clientIndex] });
        const latencyMs = Number(process.hrtime.bigint() - before) / 1e6;
        operations += 1;
        if (sampleCount < MAX_SAMPLES) samples[sampleCount++] = latencyMs;
        if (outcome.ok) {
          consecutiveErrors = 0;
          continue;
        }
        errors += 1;
        firstError ??= `code ${outcome.code}: ${outcome.details}`;
        consecutiveErrors += 1;
        if (consecutiveErrors >= MAX_CONSECUTIVE_ERRORS) throw new Error(`runLoad: ${consecutiveErrors} errors in a row, first: ${firstError}`);
      }
    }),
  );
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const serverCpuMicros = new Map(servers.map((server, index) => [server.name, processCpuMicros(server.pid) - (serverCpuBefore[index] as number)]));
  const serverActivity = new Map(servers.map((server, index) => [server.name, activitySince(processActivity(server.pid), serverActivityBefore[index] as ProcessActivity)]));
  const sorted = samples.subarray(0, sampleCount).sort();
  return {
    concurrency: options.concurrency,
    operations,
    errors,
    firstError,
    elapsedMs,
    operationsPerSecond: (operations - errors) / (elapsedMs / 1000),
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    serverCpuMicros,
    serverActivity,
    clientCpuMicros: clientCpu.user + clientCpu.system,
  };
}

/** Nearest-rank percentile of sorted samples (NaN when empty). */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] as number;
}

function activitySince(after: ProcessActivity, before: ProcessActivity): ProcessActivity {
  return { readCalls: after.readCalls - before.readCalls, writeCalls: after.writeCalls - before.writeCalls, wakeups: after.wakeups - before.wakeups };
}
