// A gateway given GATEWAY_REDIS_URL (no fallback) uses the BullMQ tier or is not ready: a
// redis-server of this test's own (a free port, no persistence; the machine's Redis on 6379 is not
// touched) is absent at the gateway's start, then started, killed and started again. While it is
// down /readyz says why and password operations answer etcd's `unhealthy cluster` (code 14) at
// once; once it answers, the gateway is ready and Authenticate works, with no restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import { createLogger } from '@ward/platform/logging';
import { freePorts } from '@ward/testing/cluster';
import { waitUntil } from '@ward/testing/etcd-harness';
import { createGateway, gatewayConfig, type Gateway } from '../src/index';
import { startApplierNode, type ApplierNode } from '../src/testing/applier-node';
import { etcdTestClient, type EtcdTestClient } from '../src/testing/etcd-client';
import { startPasswordVerifier } from './support/password-verifier';

const keyRing = generateSealingKeyEntry('k1');
const ROOT_PASSWORD = 'Outage-root-5d21c7';

let redisPort: number;
let redis: ChildProcess | undefined;
let node: ApplierNode;
let worker: ChildProcess | undefined;
let gateway: Gateway;
let etcd: EtcdTestClient;

/** redis-server on `redisPort`, resolved once it accepts connections. */
async function startRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitUntil(`redis-server on ${redisPort}:\n${output}`, () => output.includes('Ready to accept connections'), 10_000, 50);
  return child;
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = undefined;
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exited;
}

async function readyz(): Promise<{ status: number; body: { status: string; reasons?: string[] } }> {
  const response = await fetch(`http://${gateway.httpAddress}/readyz`, { signal: AbortSignal.timeout(3000) });
  return { status: response.status, body: (await response.json()) as { status: string; reasons?: string[] } };
}

async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await call();
  return { ms: performance.now() - started, result };
}

beforeAll(async () => {
  [redisPort] = (await freePorts(1)) as [number];
  node = await startApplierNode();
  gateway = await createGateway(
    gatewayConfig({
      grpcPort: 0,
      httpPort: 0,
      nodeEndpoints: [node.address],
      redisUrl: `redis://127.0.0.1:${redisPort}/0`,
      passwordPayloadKeys: keyRing,
      redisConnectTimeoutMs: 500,
      // The admission store shares the Redis: keep its wait short as well.
      authRedisTimeoutMs: 300,
      logLevel: 'silent',
    }),
    { logger: createLogger({ name: 'test', level: 'silent' }) },
  );
  etcd = etcdTestClient(gateway.grpcAddress);
}, 120_000);

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  worker?.kill('SIGKILL');
  await stopRedis();
  await node?.stop();
});

describe('GATEWAY_REDIS_URL without a fallback: the BullMQ tier or not ready', () => {
  it('starts without Redis: not ready with the reason, UserAdd answers unhealthy cluster at once', async () => {
    expect(gateway.passwordTier).toBe('queue');
    await waitUntil('a leader', async () => (await etcd.call('Maintenance', 'Status', {})).ok, 10_000);
    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toEqual([`password tier: redis at 127.0.0.1:${redisPort} unreachable`]);
    const { ms, result } = await timed(() => etcd.call('Auth', 'UserAdd', { name: 'root', password: ROOT_PASSWORD }));
    expect(result).toMatchObject({ ok: false, code: 14, details: 'etcdserver: unhealthy cluster' });
    expect(ms).toBeLessThan(2000);
    // KV does not depend on the password tier.
    expect((await etcd.call('KV', 'Put', { key: Buffer.from('k'), value: Buffer.from('v') })).ok).toBe(true);
  });

  it('becomes ready once Redis answers, without a restart; Authenticate works', async () => {
    redis = await startRedis();
    worker = await startPasswordVerifier(keyRing, 'ward', { VERIFIER_REDIS_PORT: String(redisPort) });
    await waitUntil('/readyz 200', async () => (await readyz()).status === 200, 15_000, 200);
    expect((await readyz()).body).toEqual({ status: 'ready' });
    for (const [method, request] of [
      ['UserAdd', { name: 'root', password: ROOT_PASSWORD }],
      ['UserGrantRole', { user: 'root', role: 'root' }],
      ['AuthEnable', {}],
    ] as const) {
      const result = await etcd.call('Auth', method, request);
      expect(result, method).toMatchObject({ ok: true });
    }
    const login = await etcd.call('Auth', 'Authenticate', { name: 'root', password: ROOT_PASSWORD });
    expect(login).toMatchObject({ ok: true });
    expect(await etcd.call('Auth', 'Authenticate', { name: 'root', password: 'wrong' })).toMatchObject({ ok: false, code: 3 });
  });

  it('Redis killed: not ready and a prompt unhealthy cluster; Redis back: ready and logins work again', async () => {
    await stopRedis();
    await waitUntil('/readyz 503', async () => (await readyz()).status === 503, 10_000, 100);
    expect((await readyz()).body.reasons).toEqual([`password tier: redis at 127.0.0.1:${redisPort} unreachable`]);
    const down = await timed(() => etcd.call('Auth', 'Authenticate', { name: 'root', password: ROOT_PASSWORD }));
    expect(down.result).toMatchObject({ ok: false, code: 14, details: 'etcdserver: unhealthy cluster' });
    expect(down.ms).toBeLessThan(2000);

    redis = await startRedis();
    await waitUntil('/readyz 200 again', async () => (await readyz()).status === 200, 15_000, 200);
    // The verifier reconnects by itself too (it was not restarted either).
    await waitUntil(
      'Authenticate to work again',
      async () => (await etcd.call('Auth', 'Authenticate', { name: 'root', password: ROOT_PASSWORD })).ok,
      30_000,
      250,
    );
    expect(worker!.exitCode).toBeNull();
  });
});
