// Authenticate under attack on the BullMQ tier: two real password-verifier processes (bcrypt cost
// 10) behind real Redis, reached by the gateways and the verifiers through a fault proxy. The flood
// test again; Redis unreachable for 5 s in the middle of it (Authenticate fails fast with etcd's
// error, KV goes on, logins come back without a restart); a throttle that outlives the gateway
// (its state is in Redis, which holds no password or hash).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import { connectTestRedis, deleteKeys, dumpKeys, uniquePrefix } from '@ward/testing/redis';
import { startNetProxy, type NetProxy } from '@ward/testing/net-proxy';
import type { Gateway, GatewayConfig } from '../../src/index';
import { etcdTestClient, type EtcdTestClient } from '../../src/testing/etcd-client';
import { startPasswordVerifier } from '../support/password-verifier';
import { login, must, setUpAuth, startWardCluster, type WardCluster } from '../support/ward-cluster';
import { median, percentile, sleep, startFloodProcess, startForwarder, startKvLoad, timedLogin, type FloodProcess, type Forwarder } from '../support/auth-flood';

const ROOT_PASSWORD = 'Qflood-root-61b0e2c7';
const BOB_PASSWORD = 'Qflood-bob-d48a17f3';
const ALICE_PASSWORD = 'Qflood-alice-0e9b5a62';
const TOO_MANY = '8: etcdserver: too many requests';
const AUTH_FAILED = '3: etcdserver: authentication failed, invalid user ID or password';
const UNHEALTHY = '14: etcdserver: unhealthy cluster';

const redis = connectTestRedis('auth-flood-queue');
const prefix = uniquePrefix('authflood');
const keyRing = generateSealingKeyEntry('k1');
let proxy: NetProxy;
let ward: WardCluster;
let etcd: EtcdTestClient;
let gatewayConfig: Partial<GatewayConfig>;
const workers: ChildProcess[] = [];
const forwarders: Forwarder[] = [];
const floods: FloodProcess[] = [];

beforeAll(async () => {
  proxy = await startNetProxy({ targetHost: '127.0.0.1', targetPort: 6379 });
  const proxyPort = proxy.port;
  for (const name of ['v1', 'v2']) {
    workers.push(await startPasswordVerifier(keyRing, prefix, { VERIFIER_REDIS_PORT: String(proxyPort), VERIFIER_BCRYPT_COST: '10', VERIFIER_WORKER_NAME: name }));
  }
  gatewayConfig = {
    bcryptCost: 10,
    redisUrl: `redis://127.0.0.1:${proxyPort}/0`,
    passwordPayloadKeys: keyRing,
    passwordQueuePrefix: prefix,
    passwordTimeoutMs: 5000,
  };
  ward = await startWardCluster({ gateway: gatewayConfig });
  expect(ward.gateways[0]!.passwordTier).toBe('queue');
  etcd = ward.client();
  await setUpAuth(etcd, { rootPassword: ROOT_PASSWORD, user: 'bob', password: BOB_PASSWORD, prefix: 'q/' });
  const root = await login(etcd, 'root', ROOT_PASSWORD);
  await must(etcd.call('Auth', 'UserAdd', { name: 'alice', password: ALICE_PASSWORD }, root), 'UserAdd alice');
}, 240_000);

afterAll(async () => {
  for (const flood of floods) flood.kill();
  for (const f of forwarders) await f.close();
  await ward?.stop();
  for (const worker of workers) worker.kill('SIGKILL');
  await proxy?.close();
  await deleteKeys(redis, `${prefix}:*`);
  await redis.quit();
});

async function forwarder(gateway: Gateway, localAddress: string): Promise<Forwarder> {
  const started = await startForwarder({ host: '127.0.0.1', port: gateway.grpcPort }, localAddress);
  forwarders.push(started);
  return started;
}

describe('an Authenticate flood against the BullMQ tier with 2 verifiers', () => {
  it('KV within 2× idle p99, legitimate logins go through; Redis down 5 s mid-flood: fast etcd errors, KV unaffected, recovery without a restart', async () => {
    const gateway = ward.gateways[0]!;
    const attacker = await forwarder(gateway, '127.0.0.2');
    const token = await login(etcd, 'bob', BOB_PASSWORD);
    const kv = startKvLoad(etcd, 8, 'q/', token);
    await sleep(1000);
    kv.take();
    const idleLogins: number[] = [];
    for (let i = 0; i < 7; i++) {
      const result = await timedLogin(etcd, 'bob', BOB_PASSWORD);
      expect(result.answer).toBe('ok');
      idleLogins.push(result.ms);
      await sleep(300);
    }
    const idle = kv.take();

    const flood = await startFloodProcess(attacker.address, 50, 'root');
    floods.push(flood);
    await flood.setActive(true);
    await sleep(1000);
    kv.take();
    const floodLogins: number[] = [];
    for (let i = 0; i < 8; i++) {
      const result = await timedLogin(etcd, 'bob', BOB_PASSWORD);
      expect(result.answer).toBe('ok');
      floodLogins.push(result.ms);
      await sleep(700);
    }
    const underFlood = kv.take();

    // Redis unreachable: every connection reset, new ones refused, for 5 s.
    proxy.refuse(true);
    proxy.cut();
    await sleep(300);
    const down: { ms: number; answer: string }[] = [];
    for (let i = 0; i < 6; i++) {
      down.push(await timedLogin(etcd, 'bob', BOB_PASSWORD));
      await sleep(500);
    }
    const whileDown = kv.take();
    proxy.refuse(false);
    proxy.heal();
    const healedAt = performance.now();
    let recovered: number | undefined;
    while (performance.now() - healedAt < 20_000) {
      const result = await timedLogin(etcd, 'bob', BOB_PASSWORD);
      if (result.ok) {
        recovered = performance.now() - healedAt;
        break;
      }
      await sleep(250);
    }
    const { answers: floodAnswers } = await flood.stop();
    await kv.stop();

    const figures = {
      idleP99: percentile(idle, 99),
      floodP99: percentile(underFlood, 99),
      downP99: percentile(whileDown, 99),
      idleLoginMedian: median(idleLogins),
      floodLoginMedian: median(floodLogins),
      down: down.map((d) => `${Math.round(d.ms)} ms ${d.answer}`),
      recoveredMs: recovered,
      floodAnswers,
    };
    console.log('auth flood (BullMQ tier):', JSON.stringify(figures));
    expect(kv.failures).toEqual([]);
    expect(figures.floodP99).toBeLessThanOrEqual(2 * figures.idleP99 + 5);
    expect(figures.downP99).toBeLessThanOrEqual(2 * figures.idleP99 + 5);
    // One bcrypt at cost 10 on a verifier is ~55-100 ms here; allow 2× idle plus 150 ms.
    expect(figures.floodLoginMedian).toBeLessThanOrEqual(2 * figures.idleLoginMedian + 150);
    // While Redis is away: an etcd error at once (unhealthy cluster), never a hang.
    for (const attempt of down) {
      expect([UNHEALTHY, TOO_MANY]).toContain(attempt.answer);
      expect(attempt.ms).toBeLessThan(1500);
    }
    expect(recovered).toBeDefined();
    for (const answer of Object.keys(floodAnswers)) expect([TOO_MANY, AUTH_FAILED, UNHEALTHY, '14: etcdserver: request timed out']).toContain(answer);
    expect(floodAnswers[TOO_MANY] ?? 0).toBeGreaterThan(0);
  }, 180_000);

  it('the throttle lives in Redis: a new gateway keeps delaying the same address; Redis holds no password or hash', async () => {
    const first = await ward.addGateway(gatewayConfig);
    const guesser = etcdTestClient((await forwarder(first, '127.0.0.5')).address);
    const attempts: number[] = [];
    for (let i = 0; i < 9; i++) {
      const result = await timedLogin(guesser, 'alice', `nope-${i}`);
      expect(result.answer).toBe(AUTH_FAILED);
      attempts.push(result.ms);
    }
    guesser.close();
    await first.stop();
    // A gateway started afresh. The address's 9 failures are remembered: its checks are 4 s apart
    // (the maximum), so of two attempts at once one is refused outright. Forgotten, both would
    // simply be checked (authentication failed).
    const second = await ward.addGateway(gatewayConfig);
    const again = etcdTestClient((await forwarder(second, '127.0.0.5')).address);
    const next = await Promise.all([timedLogin(again, 'alice', 'nope-9'), timedLogin(again, 'alice', 'nope-10')]);
    again.close();
    console.log('throttle across a restart:', JSON.stringify({ attempts: attempts.map(Math.round), next: next.map((n) => `${Math.round(n.ms)} ms ${n.answer}`) }));
    expect(attempts[8]!).toBeGreaterThanOrEqual(1900);
    expect(next.map((n) => n.answer).sort()).toEqual([TOO_MANY, AUTH_FAILED].sort());
    const stored = await dumpKeys(redis, `${prefix}:auth:*`);
    expect(stored.length).toBeGreaterThan(0);
    const text = JSON.stringify(stored);
    for (const secret of [ALICE_PASSWORD, BOB_PASSWORD, ROOT_PASSWORD, 'nope-7', '$2b$', '$2a$', 'alice', '127.0.0.5']) expect(text).not.toContain(secret);
  }, 120_000);
});
