// Operations on the docker compose topology, run by `npm run test:compose` once every container is
// healthy (WARD_TARGET_ENDPOINTS names the two gateways, WARD_COMPOSE_PROJECT the project). Not
// part of `npm test`: infra has no test-int target, and this file needs the running topology.
//  - SIGKILL of the leader's raft-node container under writes: no acknowledged write lost, a
//    new leader within 3 s.
//  - Rolling restart (`docker restart`: SIGTERM, then start) of every raft-node and gateway under
//    a client loop across both gateways: 0 failed client requests.
//  - `--scale password-verifier=3`: Authenticate load reaches every verifier (each one's `verify`
//    job counter moves); stopping two mid-load: every token a client got works, the Authenticates
//    that fail fail with etcd's error, none hangs.
//  - Redis restarted under Authenticate load: the failures are counted and reported, each with
//    etcd's error, none hangs, and none once Authenticate has recovered (within 30 s of Redis healthy).
// Each prints its figures (console.log) for the run's record.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { EtcdGrpcClient, ROOT_PASSWORD, externalTargetConfig, resetTarget, rootTokenIfEnabled, setupAuth, waitUntil } from '@ward/testing/etcd-harness';

const config = externalTargetConfig();
if (config === undefined) throw new Error('operations.int.test.ts runs against compose: set WARD_TARGET_ENDPOINTS (npm run test:compose does)');
const project = process.env.WARD_COMPOSE_PROJECT ?? 'ward-test';
const endpoints = config.endpoints;

/** Per logical request: attempts across the gateways (an etcd client's failover) within this time. */
const REQUEST_BUDGET_MS = 8000;
const ATTEMPT_DEADLINE_MS = 2000;
const MAX_ATTEMPTS = 40;

const execFileAsync = promisify(execFile);

/**
 * Runs docker without blocking: the client loops keep running (and their deadlines keep firing)
 * while `docker restart` waits for a container to stop. (A synchronous exec froze the loops for
 * the whole restart: their 2 s calls "took" 8 to 17 s and counted as failures.)
 */
async function docker(...args: string[]): Promise<string> {
  return (await execFileAsync('docker', args, { encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

const composeFile = join(import.meta.dirname, '..', 'docker-compose.yml');

async function compose(...args: string[]): Promise<string> {
  return (await execFileAsync('docker-compose', ['-p', project, '-f', composeFile, ...args], { encoding: 'utf8', timeout: 300_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** The running (or stopped) containers of a service. */
async function containers(service: string): Promise<string[]> {
  return (await docker('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`)).trim().split('\n').filter(Boolean);
}

async function container(service: string): Promise<string> {
  const ids = (await docker('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`)).trim().split('\n').filter(Boolean);
  if (ids.length !== 1) throw new Error(`expected one container of ${service}, found ${ids.length}`);
  return ids[0]!;
}

async function healthy(service: string, timeoutMs = 120_000): Promise<void> {
  await containerHealthy(await container(service), service, timeoutMs);
}

async function containerHealthy(id: string, what: string, timeoutMs = 120_000): Promise<void> {
  await waitUntil(`${what} healthy`, async () => (await docker('inspect', '-f', '{{.State.Health.Status}}', id)).trim() === 'healthy', timeoutMs, 500);
}

/** A verifier container's finished `verify` jobs (ward_password_verifier_jobs_total, any outcome). */
async function verifyJobs(id: string): Promise<number> {
  const script = "fetch('http://127.0.0.1:9471/metrics').then((r) => r.text()).then((t) => process.stdout.write(t), () => process.exit(1))";
  const text = await docker('exec', id, 'node', '-e', script);
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^ward_password_verifier_jobs_total\{([^}]*)\} (\S+)$/.exec(line);
    if (match && /name="verify"/.test(match[1]!)) total += Number(match[2]);
  }
  return total;
}

const clients = endpoints.map((endpoint) => new EtcdGrpcClient(endpoint));

interface RequestOutcome {
  readonly ok: boolean;
  readonly attempts: number;
  readonly lastError?: string;
  /** Every failed attempt: `<endpoint> <code> <details> after <ms> ms`. */
  readonly errors: readonly string[];
  /** When the request started, ms since the loop started. */
  readonly atMs: number;
}

/** One logical request, failing over between the gateways as etcd's clients do (retry on the other endpoint). */
async function request(first: number, call: (client: EtcdGrpcClient) => Promise<{ ok: boolean; code?: number; details?: string }>): Promise<RequestOutcome> {
  const started = Date.now();
  const deadline = started + REQUEST_BUDGET_MS;
  const atMs = started - epochMs;
  let lastError = '';
  const errors: string[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS && Date.now() < deadline; attempt++) {
    const index = (first + attempt) % clients.length;
    const client = clients[index]!;
    const attemptStarted = Date.now();
    const outcome = await call(client);
    if (outcome.ok) return { ok: true, attempts: attempt + 1, errors, atMs };
    lastError = `${outcome.code} ${outcome.details}`;
    errors.push(`${endpoints[index]} ${lastError} after ${Date.now() - attemptStarted} ms`);
    // Retry what a client retries: unavailable, deadline, leader changes; anything else is a failure.
    if (![1, 4, 14].includes(outcome.code ?? -1) && !/leader|unavailable|timed out|stopp|shut/i.test(outcome.details ?? '')) return { ok: false, attempts: attempt + 1, lastError, errors, atMs };
    await new Promise((done) => setTimeout(done, 50));
  }
  return { ok: false, attempts: errors.length, lastError, errors, atMs };
}

/** Start of the process's clock for RequestOutcome.atMs (events are printed against it too). */
const epochMs = Date.now();
const sinceEpoch = (): number => Date.now() - epochMs;

/** The failed requests, each with its attempts, for the run's record. */
function describeFailures(failed: readonly RequestOutcome[]): string {
  return failed.map((f) => `  at ${f.atMs} ms: ${f.errors.join(' | ')}`).join('\n');
}

function put(key: string, value: string) {
  return (client: EtcdGrpcClient) => client.call('KV', 'Put', { key: Buffer.from(key), value: Buffer.from(value) }, { deadlineMs: ATTEMPT_DEADLINE_MS });
}

interface Loop {
  stop(): Promise<{ acknowledged: string[]; failed: RequestOutcome[]; total: number; retried: number }>;
}

/** `writers` clients writing distinct keys in a loop, spread over both gateways. */
function writeLoop(prefix: string, writers: number): Loop {
  let running = true;
  const acknowledged: string[] = [];
  const failed: RequestOutcome[] = [];
  let total = 0;
  let retried = 0;
  const loops = Array.from({ length: writers }, async (_, writer) => {
    for (let sequence = 0; running; sequence++) {
      const key = `${prefix}/${writer}/${sequence}`;
      const outcome = await request(writer + sequence, put(key, String(sequence)));
      total++;
      if (outcome.attempts > 1) retried++;
      if (outcome.ok) acknowledged.push(key);
      else failed.push(outcome);
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return { acknowledged, failed, total, retried };
    },
  };
}

async function storedKeys(prefix: string): Promise<Set<string>> {
  const range = await clients[0]!.call<{ kvs: { key: Buffer }[] }>('KV', 'Range', { key: Buffer.from(`${prefix}/`), range_end: Buffer.from(`${prefix}0`), keys_only: true }, { deadlineMs: 10_000 });
  if (!range.ok) throw new Error(`Range ${prefix}: ${range.code} ${range.details}`);
  return new Set(range.response.kvs.map((kv) => kv.key.toString()));
}

async function leaderId(): Promise<string> {
  for (const client of clients) {
    const status = await client.call<{ leader: string }>('Maintenance', 'Status', {}, { deadlineMs: ATTEMPT_DEADLINE_MS });
    if (status.ok && status.response.leader !== '0') return String(status.response.leader);
  }
  throw new Error('no gateway reports a leader');
}


/** Users of the Authenticate loads: one loop each (the admission control bounds checks per user). */
const AUTH_USERS = Array.from({ length: 6 }, (_, index) => ({ name: `ops-user-${index}`, password: `ops-pw-${index}`, roles: ['ops'] }));
/** An Authenticate the client gave up waiting for: a hang (the gateways answer within their request timeout). */
const AUTH_ATTEMPT_DEADLINE_MS = 20_000;
const AUTH_REQUEST_BUDGET_MS = 30_000;

interface AuthOutcome {
  readonly user: string;
  readonly atMs: number;
  readonly ms: number;
  readonly attempts: number;
  readonly token?: string;
  readonly endpoint?: number;
  /** Each failed attempt: `<endpoint> <code> <details>`. */
  readonly errors: readonly string[];
  /** The final failure: an etcd error (code and `etcdserver: ` text), or a hang (no answer within the deadline). */
  readonly final?: { readonly code: number; readonly details: string; readonly hang: boolean };
}

/** Retried by the client on the other gateway, as etcd's clients do: unavailable, leader changes, busy. */
function retryableAuth(code: number, details: string): boolean {
  return code === 14 || /too many requests|leader changed|no leader|request timed out|unhealthy cluster/.test(details);
}

/** One logical Authenticate, failing over between the gateways. */
async function authenticate(user: { name: string; password: string }, first: number): Promise<AuthOutcome> {
  const started = Date.now();
  const errors: string[] = [];
  for (let attempt = 0; Date.now() - started < AUTH_REQUEST_BUDGET_MS; attempt++) {
    const index = (first + attempt) % clients.length;
    const outcome = await clients[index]!.call<{ token: string }>('Auth', 'Authenticate', { name: user.name, password: user.password }, { deadlineMs: AUTH_ATTEMPT_DEADLINE_MS });
    const base = { user: user.name, atMs: started - epochMs, ms: Date.now() - started, attempts: attempt + 1, errors };
    if (outcome.ok) return { ...base, token: outcome.response.token, endpoint: index };
    errors.push(`${endpoints[index]} ${outcome.code} ${outcome.details}`);
    const hang = outcome.code === 4 && !outcome.details.startsWith('etcdserver: ');
    if (hang || !retryableAuth(outcome.code, outcome.details)) return { ...base, final: { code: outcome.code, details: outcome.details, hang } };
    await new Promise((done) => setTimeout(done, 100));
  }
  const last = errors.at(-1) ?? '';
  return { user: user.name, atMs: started - epochMs, ms: Date.now() - started, attempts: errors.length, errors, final: { code: -1, details: `gave up after ${errors.length} attempts: ${last}`, hang: false } };
}

interface AuthLoop {
  /** What the loops have seen so far (each Authenticate once it is done, retries included). */
  seen(): readonly AuthOutcome[];
  stop(): Promise<AuthOutcome[]>;
}

/** One loop per AUTH_USERS entry, Authenticate after Authenticate, spread over both gateways. */
function authLoop(): AuthLoop {
  let running = true;
  const outcomes: AuthOutcome[] = [];
  const loops = AUTH_USERS.map(async (user, index) => {
    for (let sequence = 0; running; sequence++) outcomes.push(await authenticate(user, index + sequence));
  });
  return {
    seen: () => outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Tokens a client was given that the cluster does not take (a Range under the users' read grant). */
async function unusableTokens(outcomes: readonly AuthOutcome[]): Promise<string[]> {
  const bad: string[] = [];
  const succeeded = outcomes.filter((outcome) => outcome.token !== undefined);
  for (let start = 0; start < succeeded.length; start += 16) {
    await Promise.all(
      succeeded.slice(start, start + 16).map(async (outcome) => {
        const range = await clients[outcome.endpoint!]!.call('KV', 'Range', { key: Buffer.from('ops/probe') }, { token: outcome.token!, deadlineMs: 10_000 });
        if (!range.ok) bad.push(`${outcome.user} via ${endpoints[outcome.endpoint!]}: ${range.code} ${range.details}`);
      }),
    );
  }
  return bad;
}

function summarizeAuth(outcomes: readonly AuthOutcome[]): string {
  const ok = outcomes.filter((outcome) => outcome.token !== undefined);
  const retried = outcomes.filter((outcome) => outcome.errors.length > 0 && outcome.token !== undefined).length;
  const failed = outcomes.filter((outcome) => outcome.final !== undefined);
  const byText = new Map<string, number>();
  for (const outcome of failed) byText.set(`${outcome.final!.code} ${outcome.final!.details}`, (byText.get(`${outcome.final!.code} ${outcome.final!.details}`) ?? 0) + 1);
  const slowest = Math.max(0, ...outcomes.map((outcome) => outcome.ms));
  // Every failed attempt, retried or not, by its error (the endpoint left out).
  const attempts = new Map<string, number>();
  for (const error of outcomes.flatMap((outcome) => outcome.errors)) {
    const text = error.slice(error.indexOf(' ') + 1);
    attempts.set(text, (attempts.get(text) ?? 0) + 1);
  }
  const list = (counts: Map<string, number>): string => [...counts].map(([text, count]) => `${count}× ${text}`).join('; ');
  return `${outcomes.length} Authenticates, ${ok.length} succeeded (${retried} after a retry), ${failed.length} failed${byText.size > 0 ? ` (${list(byText)})` : ''}; failed attempts: ${attempts.size > 0 ? list(attempts) : 'none'}; slowest ${slowest} ms`;
}

async function withAuth<T>(run: () => Promise<T>): Promise<T> {
  await resetTarget(clients[0]!);
  await setupAuth(clients[0]!, { roles: [{ name: 'ops', permissions: [{ permType: 'READ', key: 'ops/', rangeEnd: 'ops0' }] }], users: AUTH_USERS, enable: true });
  try {
    return await run();
  } finally {
    const token = await rootTokenIfEnabled(clients[0]!, ROOT_PASSWORD).catch(() => undefined);
    if (token !== undefined) await clients[0]!.call('Auth', 'AuthDisable', {}, { token });
    await resetTarget(clients[0]!);
  }
}

beforeAll(async () => {
  await resetTarget(clients[0]!);
});

afterAll(() => {
  for (const client of clients) client.close();
});

describe.sequential('docker compose operations', () => {
  it('docker kill of the leader under writes: no acknowledged write lost, a new leader within 3 s', async () => {
    const before = await leaderId();
    const loop = writeLoop('kill', 4);
    await new Promise((done) => setTimeout(done, 2000));
    const killedAt = Date.now();
    // Wall-clock time, to line up with the raft-nodes' `leader changed` log lines.
    const killedIso = new Date(killedAt).toISOString();
    const victim = await container(`raft-node-${before}`);
    await docker('kill', victim);
    let newLeaderMs = -1;
    await waitUntil(
      'a new leader',
      async () => {
        const now = await leaderId().catch(() => before);
        if (now === before) return false;
        newLeaderMs = Date.now() - killedAt;
        return true;
      },
      30_000,
      50,
    );
    await new Promise((done) => setTimeout(done, 2000));
    const result = await loop.stop();
    const stored = await storedKeys('kill');
    const lost = result.acknowledged.filter((key) => !stored.has(key));
    console.log(`kill leader: member ${before} killed at ${killedIso}; new leader after ${newLeaderMs} ms; ${result.total} writes, ${result.acknowledged.length} acknowledged, ${result.retried} needed a retry, ${result.failed.length} failed; ${lost.length} acknowledged writes lost`);
    await docker('start', victim);
    await healthy(`raft-node-${before}`);
    expect(lost).toEqual([]);
    expect(newLeaderMs).toBeGreaterThan(0);
    expect(newLeaderMs).toBeLessThanOrEqual(3000);
    expect(result.acknowledged.length).toBeGreaterThan(0);
  });

  it('rolling restart of every raft-node and gateway under a client loop over both gateways: 0 failed requests', async () => {
    const loop = writeLoop('rolling', 4);
    const timings: string[] = [];
    for (const service of ['raft-node-1', 'raft-node-2', 'raft-node-3', 'etcd-gateway-1', 'etcd-gateway-2']) {
      const started = Date.now();
      console.log(`restarting ${service} at ${sinceEpoch()} ms`);
      await docker('restart', '-t', '15', await container(service));
      await healthy(service);
      timings.push(`${service} ${Date.now() - started} ms`);
      console.log(`restarted ${service}: healthy after ${Date.now() - started} ms`);
      // The cluster's own view too: a leader before the next member goes.
      await waitUntil('a leader', async () => (await leaderId().catch(() => '0')) !== '0', 30_000, 200);
    }
    const result = await loop.stop();
    const stored = await storedKeys('rolling');
    const lost = result.acknowledged.filter((key) => !stored.has(key));
    console.log(`rolling restart (${timings.join(', ')}): ${result.total} requests, ${result.retried} needed a retry on the other gateway, ${result.failed.length} failed; ${lost.length} acknowledged writes lost${result.failed.length > 0 ? `\n${describeFailures(result.failed)}` : ''}`);
    expect(result.failed).toEqual([]);
    expect(lost).toEqual([]);
    expect(result.total).toBeGreaterThan(0);
  }, 900_000);

  it('--scale password-verifier=3: Authenticate load reaches every verifier; stopping two mid-load loses no Authenticate a client saw succeed, none hangs', async () => {
    await compose('up', '-d', '--no-build', '--no-recreate', '--no-deps', '--scale', 'password-verifier=3', 'password-verifier');
    try {
      const verifiers = await containers('password-verifier');
      expect(verifiers).toHaveLength(3);
      for (const id of verifiers) await containerHealthy(id, `password-verifier ${id.slice(0, 12)}`);
      await withAuth(async () => {
        const before = await Promise.all(verifiers.map(verifyJobs));
        const spread = authLoop();
        await new Promise((done) => setTimeout(done, 15_000));
        const spreadOutcomes = await spread.stop();
        const after = await Promise.all(verifiers.map(verifyJobs));
        const moved = after.map((count, index) => count - before[index]!);
        console.log(`scale 3, spread: verify jobs per verifier ${moved.join(', ')}; ${summarizeAuth(spreadOutcomes)}`);
        expect(moved.every((count) => count > 0)).toBe(true);
        expect(spreadOutcomes.filter((outcome) => outcome.token !== undefined).length).toBeGreaterThan(0);

        const load = authLoop();
        await new Promise((done) => setTimeout(done, 5000));
        const stoppedAt = Date.now() - epochMs;
        await docker('stop', '-t', '15', verifiers[1]!, verifiers[2]!);
        console.log(`stopped two verifiers at ${stoppedAt} ms (docker stop took ${Date.now() - epochMs - stoppedAt} ms)`);
        await new Promise((done) => setTimeout(done, 10_000));
        const outcomes = await load.stop();
        const bad = await unusableTokens(outcomes);
        const failed = outcomes.filter((outcome) => outcome.final !== undefined);
        console.log(`scale 3, two stopped mid-load: ${summarizeAuth(outcomes)}; ${bad.length} tokens refused afterwards${failed.length > 0 ? `\n${failed.slice(0, 20).map((f) => `  at ${f.atMs} ms ${f.user}: ${f.errors.join(' | ')}`).join('\n')}` : ''}`);
        expect(bad).toEqual([]);
        expect(failed.filter((outcome) => outcome.final!.hang)).toEqual([]);
        // What fails, fails with etcd's error (code and text), never with something else.
        for (const outcome of failed) expect(outcome.final!.details).toMatch(/^etcdserver: |^gave up after/);
        expect(outcomes.filter((outcome) => outcome.token !== undefined && outcome.atMs > stoppedAt).length).toBeGreaterThan(0);
      });
    } finally {
      for (const id of (await containers('password-verifier')).slice(1)) await docker('rm', '-f', id);
      await compose('up', '-d', '--no-build', '--no-recreate', '--no-deps', '--scale', 'password-verifier=1', 'password-verifier');
      await containerHealthy(await container('password-verifier'), 'password-verifier');
    }
  }, 600_000);

  it('Redis restarted under Authenticate load: a bounded, reported error count, then Authenticate recovers', async () => {
    await withAuth(async () => {
      const load = authLoop();
      await new Promise((done) => setTimeout(done, 5000));
      const restartAt = Date.now() - epochMs;
      await docker('restart', '-t', '15', await container('redis'));
      await healthy('redis');
      const healthyAt = Date.now() - epochMs;
      // Until every loop has succeeded again after Redis came back, then a little longer.
      await waitUntil('Authenticate recovers after Redis', async () => {
        const probe = await authenticate(AUTH_USERS[0]!, 0);
        return probe.token !== undefined;
      }, 60_000, 500);
      const recoveredAt = Date.now() - epochMs;
      // The loops' own Authenticates that were in flight when Redis went away wait out their job's
      // timeout and retry; until one of theirs started after the recovery has succeeded, then a
      // little longer.
      await waitUntil('a load loop authenticates again after the recovery', async () => load.seen().some((outcome) => outcome.token !== undefined && outcome.atMs > recoveredAt), 60_000, 200);
      await new Promise((done) => setTimeout(done, 3000));
      const outcomes = await load.stop();
      const failed = outcomes.filter((outcome) => outcome.final !== undefined);
      const bad = await unusableTokens(outcomes);
      console.log(`redis restart at ${restartAt} ms, healthy at ${healthyAt} ms, Authenticate recovered at ${recoveredAt} ms: ${summarizeAuth(outcomes)}; ${bad.length} tokens refused afterwards${failed.length > 0 ? `\n${failed.slice(0, 20).map((f) => `  at ${f.atMs} ms ${f.user}: ${f.errors.join(' | ')}`).join('\n')}` : ''}`);
      expect(bad).toEqual([]);
      expect(failed.filter((outcome) => outcome.final!.hang)).toEqual([]);
      for (const outcome of failed) expect(outcome.final!.details).toMatch(/^etcdserver: |^gave up after/);
      // Bounded: failures only while Redis was away or reconnecting, none once Authenticate recovered.
      expect(failed.filter((outcome) => outcome.atMs > recoveredAt)).toEqual([]);
      expect(recoveredAt - healthyAt).toBeLessThanOrEqual(30_000);
      expect(outcomes.filter((outcome) => outcome.token !== undefined && outcome.atMs > recoveredAt).length).toBeGreaterThan(0);
    });
  }, 600_000);
});
