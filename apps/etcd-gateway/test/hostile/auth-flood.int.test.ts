// Authenticate under attack, on the in-process password tier at etcd's bcrypt cost (10): 50
// clients call Authenticate with wrong passwords from their own address while 8 clients put and
// range. KV latency stays within 2× its idle p99, a legitimate user still logs in within 2× its
// idle latency plus one bcrypt, every refused attempt gets etcd's `too many requests`. Then
// per-user fairness (the throttle out of the way: the fair queue alone) and the throttle itself.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BcryptPasswordVerifier } from '@ward/auth/password-hashing';
import type { Gateway } from '../../src/index';
import { etcdTestClient, type EtcdTestClient } from '../../src/testing/etcd-client';
import { login, must, setUpAuth, startWardCluster, type WardCluster } from '../support/ward-cluster';
import { median, percentile, sleep, startFloodProcess, startForwarder, startKvLoad, timedLogin, type FloodProcess, type Forwarder } from '../support/auth-flood';

const ROOT_PASSWORD = 'Flood-root-5c1e0b9a';
const BOB_PASSWORD = 'Flood-bob-27f4d6e1';
const ALICE_PASSWORD = 'Flood-alice-9a03c5b8';
const TOO_MANY = '8: etcdserver: too many requests';
const AUTH_FAILED = '3: etcdserver: authentication failed, invalid user ID or password';
const TIMED_OUT = '14: etcdserver: request timed out';

let ward: WardCluster;
let etcd: EtcdTestClient;
const forwarders: Forwarder[] = [];
const floods: FloodProcess[] = [];
let bcryptMs: number;

async function metricsOf(gateway: Gateway): Promise<string> {
  return (await fetch(`http://${gateway.httpAddress}/metrics`)).text();
}

function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

async function forwarder(gateway: Gateway, localAddress: string): Promise<Forwarder> {
  const started = await startForwarder({ host: '127.0.0.1', port: gateway.grpcPort }, localAddress);
  forwarders.push(started);
  return started;
}

beforeAll(async () => {
  ward = await startWardCluster({ gateway: { bcryptCost: 10 } });
  etcd = ward.client();
  await setUpAuth(etcd, { rootPassword: ROOT_PASSWORD, user: 'bob', password: BOB_PASSWORD, prefix: 'f/' });
  const root = await login(etcd, 'root', ROOT_PASSWORD);
  await must(etcd.call('Auth', 'UserAdd', { name: 'alice', password: ALICE_PASSWORD }, root), 'UserAdd alice');
  const verifier = new BcryptPasswordVerifier({ cost: 10 });
  const hash = await verifier.hash(Buffer.from('x'));
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await verifier.verify(Buffer.from('y'), hash);
    samples.push(performance.now() - started);
  }
  // The least disturbed of five: what one bcrypt costs here, not the machine's noise on top.
  bcryptMs = Math.min(...samples);
}, 180_000);

afterAll(async () => {
  for (const flood of floods) flood.kill();
  for (const f of forwarders) await f.close();
  await ward?.stop();
});

/** Median of `count` logins, `gapMs` apart. */
async function loginLatencies(client: EtcdTestClient, name: string, password: string, count: number, gapMs: number): Promise<{ ms: number[]; answers: string[] }> {
  const ms: number[] = [];
  const answers: string[] = [];
  for (let i = 0; i < count; i++) {
    const result = await timedLogin(client, name, password);
    ms.push(result.ms);
    answers.push(result.answer);
    await sleep(gapMs);
  }
  return { ms, answers };
}

describe('an Authenticate flood against the in-process tier', () => {
  it('50 wrong-password clients, 5 rounds of 3 s idle / 3 s flood: KV p99 within 2× idle, legitimate logins within 2× idle + one bcrypt, refusals are too many requests', async () => {
    const gateway = ward.gateways[0]!;
    const attacker = await forwarder(gateway, '127.0.0.2');
    const token = await login(etcd, 'bob', BOB_PASSWORD);
    const kv = startKvLoad(etcd, 8, 'f/', token);
    // The attacker runs in its own process, as it would on its own machine.
    const flood = await startFloodProcess(attacker.address, 50, 'root');
    floods.push(flood);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    await sleep(1000);
    // Idle and flood windows alternate, so both see the same (shared, changing) machine load.
    const p99s = { idle: [] as number[], flood: [] as number[] };
    const logins = { idle: [] as number[], flood: [] as number[] };
    const loops = { idle: [] as number[], flood: [] as number[] };
    const answers: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (const phase of ['idle', 'flood'] as const) {
        await flood.setActive(phase === 'flood');
        await sleep(500);
        kv.take();
        loop.reset();
        loop.enable();
        for (let i = 0; i < 3; i++) {
          const result = await timedLogin(etcd, 'bob', BOB_PASSWORD);
          answers.push(result.answer);
          logins[phase].push(result.ms);
          await sleep(800);
        }
        p99s[phase].push(percentile(kv.take(), 99));
        loops[phase].push(loop.percentile(99) / 1e6);
        loop.disable();
      }
    }
    const { answers: floodAnswers } = await flood.stop();
    await kv.stop();
    const metrics = await metricsOf(gateway);

    const figures = {
      kvP99: { idle: median(p99s.idle), flood: median(p99s.flood) },
      login: { idle: median(logins.idle), flood: median(logins.flood) },
      bcryptMs,
      eventLoopP99: { idle: median(loops.idle), flood: median(loops.flood) },
      floodAnswers,
      refusedThrottled: metric(metrics, 'ward_gateway_auth_refused_total{reason="throttled-address"}'),
    };
    console.log('auth flood (in-process tier):', JSON.stringify(figures));
    expect(kv.failures).toEqual([]);
    // Medians over 5 windows each; 2× the idle p99 plus 5 ms for timer noise.
    expect(figures.kvP99.flood).toBeLessThanOrEqual(2 * figures.kvP99.idle + 5);
    expect(answers.every((answer) => answer === 'ok')).toBe(true);
    expect(figures.login.flood).toBeLessThanOrEqual(2 * figures.login.idle + bcryptMs);
    // Every attempt of the flood was refused: the password was wrong, or too many requests (or, for
    // a check still queued after GATEWAY_PASSWORD_TIMEOUT_MS on this busy machine, request timed out).
    expect(Object.keys(floodAnswers)).toContain(TOO_MANY);
    expect(Object.keys(floodAnswers)).toContain(AUTH_FAILED);
    for (const answer of Object.keys(floodAnswers)) expect([TOO_MANY, AUTH_FAILED, TIMED_OUT]).toContain(answer);
    expect(floodAnswers[TOO_MANY]!).toBeGreaterThan(floodAnswers[AUTH_FAILED]!);
    expect(figures.refusedThrottled).toBeGreaterThan(0);
    expect(metric(metrics, 'ward_gateway_auth_queue_depth')).toBe(0);
    // The gateway's event loop (shared with the test's clients here) is not held by the tier.
    expect(figures.eventLoopP99.flood).toBeLessThanOrEqual(2 * figures.eventLoopP99.idle + 20);
  }, 180_000);
});

describe('per-user fairness (throttle out of the way: the fair queue alone)', () => {
  it('a flood of one user name does not make another user wait behind it', async () => {
    // Two checks at once, alice's share of the queue 16: her attempts wait ~8 turns, bob ~1.
    const gateway = await ward.addGateway({ bcryptCost: 10, authThrottleFreeFailuresCount: 10_000, authInFlightCount: 2, authQueuePerUserCount: 16 });
    const client = ward.client(gateway);
    const attacker = await forwarder(gateway, '127.0.0.3');
    const flood = await startFloodProcess(attacker.address, 24, 'alice');
    floods.push(flood);
    await flood.setActive(true);
    await sleep(1500);
    const underFlood = await loginLatencies(client, 'bob', BOB_PASSWORD, 9, 500);
    const { answers: floodAnswers, checkedMs } = await flood.stop();
    // alice's checked attempts after the ramp-up (the last ones, as many as bob's test lasted).
    const alice = checkedMs.slice(Math.floor(checkedMs.length / 3));
    const metrics = await metricsOf(gateway);
    const figures = {
      bobMedian: median(underFlood.ms),
      aliceCheckedMedian: median(alice),
      aliceChecked: alice.length,
      floodAnswers,
      userQueueFull: metric(metrics, 'ward_gateway_auth_refused_total{reason="user-queue-full"}'),
    };
    console.log('per-user fairness:', JSON.stringify(figures));
    expect(underFlood.answers.every((answer) => answer === 'ok')).toBe(true);
    // The flood kept the tier busy (its checks ran, the rest were refused at the per-user bound) ...
    expect(alice.length).toBeGreaterThan(10);
    expect(figures.userQueueFull).toBeGreaterThan(0);
    // ... and bob did not queue behind it: first-come-first-served would give him alice's wait.
    expect(figures.bobMedian).toBeLessThanOrEqual(0.5 * figures.aliceCheckedMedian);
  }, 120_000);
});

describe('the failure throttle', () => {
  it('after the free failures from one address the next attempts wait longer and longer; the right password then succeeds', async () => {
    const gateway = await ward.addGateway({ bcryptCost: 10 });
    const guesser = etcdTestClient((await forwarder(gateway, '127.0.0.4')).address);
    const attempts: { ms: number; answer: string }[] = [];
    for (let i = 0; i < 8; i++) attempts.push(await timedLogin(guesser, 'alice', `wrong-${i}`));
    const right = await timedLogin(guesser, 'alice', ALICE_PASSWORD);
    guesser.close();
    const metrics = await metricsOf(gateway);
    console.log('throttle:', JSON.stringify({ attempts: attempts.map((a) => Math.round(a.ms)), right: Math.round(right.ms) }));
    expect(attempts.every((a) => a.answer === AUTH_FAILED)).toBe(true);
    // Failures 1-5 are free; then 250, 500, 1000, 2000 ms (base 250, doubling) before the check is
    // queued: on top of what a free attempt takes (the quickest of the five).
    const free = Math.min(...attempts.slice(0, 5).map((a) => a.ms));
    expect(attempts[5]!.ms).toBeGreaterThanOrEqual(200);
    expect(attempts[6]!.ms).toBeGreaterThanOrEqual(450);
    expect(attempts[7]!.ms).toBeGreaterThanOrEqual(Math.max(950, free + 700));
    expect(right.ok).toBe(true);
    expect(right.ms).toBeGreaterThanOrEqual(Math.max(1950, free + 1500));
    expect(metric(metrics, 'ward_gateway_auth_throttled_total{reason="pair"}')).toBeGreaterThanOrEqual(3);
    // The success reset alice: from a clean address she logs in at once.
    const clean = await timedLogin(ward.client(gateway), 'alice', ALICE_PASSWORD);
    expect(clean.ok).toBe(true);
    expect(clean.ms).toBeLessThan(attempts[7]!.ms);
    // A warn line per throttled client, naming its address, never a password.
    const warned = ward.logLines.filter((line) => line.includes('password check throttled or refused'));
    expect(warned.some((line) => line.includes('"address":"127.0.0.4"'))).toBe(true);
    expect(ward.logLines.some((line) => line.includes(ALICE_PASSWORD) || line.includes('wrong-7'))).toBe(false);
  }, 120_000);
});
