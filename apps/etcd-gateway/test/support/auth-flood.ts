// Load for the Authenticate-flood tests: wrong-password Authenticate loops from another client
// address, KV put/range loops, latency percentiles, and a TCP forwarder that dials the gateway
// from a chosen loopback address (the whole of 127.0.0.0/8 is local on Linux), so the gateway sees
// the flood's address apart from the legitimate clients' 127.0.0.1.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { etcdTestClient, type EtcdTestClient } from '../../src/testing/etcd-client';

export interface Forwarder {
  readonly address: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:<any>; every connection goes on to `target` from `localAddress`. */
export async function startForwarder(target: { host: string; port: number }, localAddress: string): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect({ host: target.host, port: target.port, localAddress });
    sockets.add(inbound).add(outbound);
    const drop = (): void => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

/** Answers of the flood, counted by `code: details` (or `ok`). */
export type AnswerCounts = Map<string, number>;

export interface Flood {
  readonly answers: AnswerCounts;
  /** Latencies (ms) of the attempts answered `authentication failed` (their check ran). */
  readonly checkedMs: number[];
  /** Pauses (false) or resumes (true) every loop; a paused loop finishes its call first. */
  setActive(active: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** `clients` loops calling Authenticate as `user` with a wrong password through `address`, until stopped. */
export function startAuthenticateFlood(address: string, clients: number, user: string): Flood {
  const answers: AnswerCounts = new Map();
  const checkedMs: number[] = [];
  let running = true;
  let paused: { promise: Promise<void>; resume: () => void } | undefined;
  const idle = new Set<number>();
  const etcds: EtcdTestClient[] = [];
  const loops = Array.from({ length: clients }, async (_, i) => {
    const etcd = etcdTestClient(address);
    etcds.push(etcd);
    for (let n = 0; running; n++) {
      while (paused !== undefined && running) {
        idle.add(i);
        await paused.promise;
        idle.delete(i);
      }
      const started = performance.now();
      const result = await etcd.call('Auth', 'Authenticate', { name: user, password: `guess-${i}-${n}` });
      const key = result.ok ? 'ok' : `${result.code}: ${result.details}`;
      if (!result.ok && result.code === 3) checkedMs.push(performance.now() - started);
      answers.set(key, (answers.get(key) ?? 0) + 1);
    }
  });
  return {
    answers,
    checkedMs,
    async setActive(active) {
      if (active) {
        paused?.resume();
        paused = undefined;
        return;
      }
      if (paused !== undefined) return;
      let resume!: () => void;
      paused = { promise: new Promise<void>((r) => (resume = r)), resume };
      while (idle.size < clients && running) await sleep(20);
    },
    async stop() {
      running = false;
      paused?.resume();
      await Promise.all(loops);
      for (const etcd of etcds) etcd.close();
    },
  };
}

export interface KvLoad {
  /** Latencies (ms) of every successful put and range since the last take. */
  take(): number[];
  readonly failures: string[];
  stop(): Promise<void>;
}

/** `clients` loops alternating a put and a range under `prefix`, as the holder of `token`. */
export function startKvLoad(etcd: EtcdTestClient, clients: number, prefix: string, token: string): KvLoad {
  let samples: number[] = [];
  const failures: string[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async (_, i) => {
    for (let n = 0; running; n++) {
      const key = Buffer.from(`${prefix}${i}-${n % 50}`);
      const started = performance.now();
      const result =
        n % 2 === 0 ? await etcd.call('KV', 'Put', { key, value: Buffer.from(`v${n}`) }, token) : await etcd.call('KV', 'Range', { key }, token);
      if (result.ok) samples.push(performance.now() - started);
      else failures.push(`${result.code}: ${result.details}`);
    }
  });
  return {
    take() {
      const taken = samples;
      samples = [];
      return taken;
    },
    failures,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One Authenticate's latency (ms) and whether it gave a token. */
export async function timedLogin(etcd: EtcdTestClient, name: string, password: string): Promise<{ ms: number; ok: boolean; answer: string }> {
  const started = performance.now();
  const result = await etcd.call('Auth', 'Authenticate', { name, password });
  return { ms: performance.now() - started, ok: result.ok, answer: result.ok ? 'ok' : `${result.code}: ${result.details}` };
}

export interface FloodProcess {
  setActive(active: boolean): Promise<void>;
  /** Stops the flood and its process; the answers it got. */
  stop(): Promise<{ answers: Record<string, number>; checkedMs: number[] }>;
  kill(): void;
}

/** startAuthenticateFlood in a child process (its own CPU and event loop, as a remote attacker's). */
export async function startFloodProcess(address: string, clients: number, user: string): Promise<FloodProcess> {
  const { spawn } = await import('node:child_process');
  const { join } = await import('node:path');
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'flood-main.ts'), address, String(clients), user], {
    cwd: join(import.meta.dirname, '../../../..'),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  const waiters: { word: string; resolve: (line: string) => void }[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    let newline = output.indexOf('\n');
    while (newline >= 0) {
      const line = output.slice(0, newline);
      output = output.slice(newline + 1);
      newline = output.indexOf('\n');
      const index = waiters.findIndex((w) => (w.word === '{' ? line.startsWith('{') : line === w.word));
      if (index >= 0) waiters.splice(index, 1)[0]!.resolve(line);
    }
  });
  const waitFor = (word: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`flood process: no "${word}" within 60 s; stderr:\n${stderr.slice(-2000)}`)), 60_000);
      waiters.push({ word, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  await waitFor('ready');
  return {
    async setActive(active) {
      const word = active ? 'on' : 'off';
      const acknowledged = waitFor(word);
      child.stdin!.write(`${word}\n`);
      await acknowledged;
    },
    async stop() {
      const result = waitFor('{');
      child.stdin!.write('stop\n');
      return JSON.parse(await result) as { answers: Record<string, number>; checkedMs: number[] };
    },
    kill() {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    },
  };
}
