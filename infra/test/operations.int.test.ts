// Operations on the docker compose topology, run by `npm run test:compose` once every container is
// healthy (WARD_TARGET_ENDPOINTS names the two gateways, WARD_COMPOSE_PROJECT the project). Not
// part of `npm test`: infra has no test-int target, and this file needs the running topology.
//  - SIGKILL of the leader's raft-node container under writes: no acknowledged write lost, a
//    new leader within 3 s.
//  - Rolling restart (`docker restart`: SIGTERM, then start) of every raft-node and gateway under
//    a client loop across both gateways: 0 failed client requests.
// Each prints its figures (console.log) for the run's record.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, externalTargetConfig, resetTarget, waitUntil } from '@ward/testing/etcd-harness';

const config = externalTargetConfig();
if (config === undefined) throw new Error('operations.int.test.ts runs against compose: set WARD_TARGET_ENDPOINTS (npm run test:compose does)');
const project = process.env.WARD_COMPOSE_PROJECT ?? 'ward-test';
const endpoints = config.endpoints;

/** Per logical request: attempts across the gateways (an etcd client's failover) within this time. */
const REQUEST_BUDGET_MS = 8000;
const ATTEMPT_DEADLINE_MS = 2000;
const MAX_ATTEMPTS = 40;

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
}

function container(service: string): string {
  const ids = docker('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`).trim().split('\n').filter(Boolean);
  if (ids.length !== 1) throw new Error(`expected one container of ${service}, found ${ids.length}`);
  return ids[0]!;
}

async function healthy(service: string, timeoutMs = 120_000): Promise<void> {
  const id = container(service);
  await waitUntil(`${service} healthy`, () => docker('inspect', '-f', '{{.State.Health.Status}}', id).trim() === 'healthy', timeoutMs, 500);
}

const clients = endpoints.map((endpoint) => new EtcdGrpcClient(endpoint));

interface RequestOutcome {
  readonly ok: boolean;
  readonly attempts: number;
  readonly lastError?: string;
}

/** One logical request, failing over between the gateways as etcd's clients do (retry on the other endpoint). */
async function request(first: number, call: (client: EtcdGrpcClient) => Promise<{ ok: boolean; code?: number; details?: string }>): Promise<RequestOutcome> {
  const deadline = Date.now() + REQUEST_BUDGET_MS;
  let lastError = '';
  for (let attempt = 0; attempt < MAX_ATTEMPTS && Date.now() < deadline; attempt++) {
    const client = clients[(first + attempt) % clients.length]!;
    const outcome = await call(client);
    if (outcome.ok) return { ok: true, attempts: attempt + 1 };
    lastError = `${outcome.code} ${outcome.details}`;
    // Retry what a client retries: unavailable, deadline, leader changes; anything else is a failure.
    if (![1, 4, 14].includes(outcome.code ?? -1) && !/leader|unavailable|timed out|stopp|shut/i.test(outcome.details ?? '')) return { ok: false, attempts: attempt + 1, lastError };
    await new Promise((done) => setTimeout(done, 50));
  }
  return { ok: false, attempts: MAX_ATTEMPTS, lastError };
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
    docker('kill', container(`raft-node-${before}`));
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
    console.log(`kill leader: member ${before} killed; new leader after ${newLeaderMs} ms; ${result.total} writes, ${result.acknowledged.length} acknowledged, ${result.retried} needed a retry, ${result.failed.length} failed; ${lost.length} acknowledged writes lost`);
    docker('start', container(`raft-node-${before}`));
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
      docker('restart', '-t', '15', container(service));
      await healthy(service);
      timings.push(`${service} ${Date.now() - started} ms`);
      console.log(`restarted ${service}: healthy after ${Date.now() - started} ms`);
      // The cluster's own view too: a leader before the next member goes.
      await waitUntil('a leader', async () => (await leaderId().catch(() => '0')) !== '0', 30_000, 200);
    }
    const result = await loop.stop();
    const stored = await storedKeys('rolling');
    const lost = result.acknowledged.filter((key) => !stored.has(key));
    console.log(`rolling restart (${timings.join(', ')}): ${result.total} requests, ${result.retried} needed a retry on the other gateway, ${result.failed.length} failed${result.failed.length > 0 ? ` (${result.failed.slice(0, 3).map((f) => f.lastError).join('; ')})` : ''}; ${lost.length} acknowledged writes lost`);
    expect(result.failed).toEqual([]);
    expect(lost).toEqual([]);
    expect(result.total).toBeGreaterThan(0);
  }, 900_000);
});
