// The internal API on a one-member cluster: auth support (AuthCheck, simple tokens with their
// sliding TTL, ResolveToken answering at once at the leader for an index beyond its log),
// apply-time permission errors, and refusals.
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPasswordHash, type ApplyOperation, type ApplyRequest } from '@ward/etcd/apply';
import { LocalCluster, buildRaftNodeBundle, putRequest, type NodeApiClient } from '@ward/testing/cluster';

const u8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const HASH = toPasswordHash(u8('$2b$10$C6UzMDM.H6dfI/f/IKxGhu8ATXq6Yn3ML9bL1rJ6GyqW3G1P4WgD6'));
const TOKEN_TTL_SECONDS = 2;
let cluster: LocalCluster;
let client: NodeApiClient;

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 1, env: { RAFT_NODE_SIMPLE_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS) } });
  await cluster.waitForLeader(30_000);
  client = cluster.client(1n);
});
afterAll(async () => {
  await cluster?.stop();
});

const as = (username: string, authRevision: number, operation: ApplyOperation): ApplyRequest => ({ header: { id: 0n, username, authRevision }, operation });

async function ok(request: ApplyRequest): Promise<unknown> {
  const answer = await client.propose(request, 5000);
  if (answer.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(answer, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
  return answer.response.response;
}

async function authenticate(name: string, prefix: string): Promise<string> {
  return ((await ok(as('', 0, { type: 'authenticate', request: { name, simpleTokenPrefix: prefix } }))) as { token: string }).token;
}

function rawPropose(entry: Buffer): Promise<unknown> {
  const raw = client.raw as unknown as { Propose(r: object, cb: (e: ServiceError | null, r: unknown) => void): void };
  return new Promise((resolve) => raw.Propose({ entry, timeout_ms: 1000 }, (error, response) => resolve(error ?? response)));
}

/** AuthCheck calls on one Exchange stream (as a gateway sends them): the answers by call id. */
function exchangeAuthChecks(names: string[]): Promise<Map<string, unknown>> {
  type Answers = { answers: Array<{ id: string; answer?: { result?: string; auth_check?: unknown }; status?: unknown }> };
  const raw = client.raw as unknown as { Exchange(): { write(m: object): void; on(e: string, f: (m: Answers) => void): void; cancel(): void } };
  const stream = raw.Exchange();
  const answers = new Map<string, unknown>();
  return new Promise((resolve, reject) => {
    stream.on('data', (message: Answers) => {
      for (const answer of message.answers) answers.set(answer.id, answer.answer?.result === 'auth_check' ? answer.answer.auth_check : answer);
      if (answers.size === names.length) {
        stream.cancel();
        resolve(answers);
      }
    });
    stream.on('error', (error) => (answers.size === names.length ? undefined : reject(error)));
    stream.write({ calls: names.map((name, index) => ({ id: String(index + 1), auth_check: { name } })) });
  });
}

describe('internal API: auth support', () => {
  let authRevision = 0;

  it('enables auth through proposals and answers AuthCheck with the stored hash and revision', async () => {
    await ok(as('', 0, { type: 'userAdd', request: { name: 'root', passwordHash: HASH, noPassword: false } }));
    await ok(as('', 0, { type: 'userGrantRole', request: { user: 'root', role: 'root' } }));
    await ok(as('', 0, { type: 'userAdd', request: { name: 'bot', passwordHash: null, noPassword: true } }));
    await ok(as('', 0, { type: 'authEnable' }));
    const check = (await client.authCheck('root')) as { check: { auth_enabled: boolean; user_exists: boolean; no_password: boolean; password_hash: Buffer; auth_revision: string } };
    expect(check.check.auth_enabled && check.check.user_exists && !check.check.no_password).toBe(true);
    expect(check.check.password_hash.toString()).toBe(new TextDecoder().decode(HASH));
    authRevision = Number(check.check.auth_revision);
    expect(authRevision).toBeGreaterThan(1);
    expect(((await client.authCheck('nobody')) as { check: { user_exists: boolean } }).check.user_exists).toBe(false);
    expect(((await client.authCheck('bot')) as { check: { no_password: boolean } }).check.no_password).toBe(true);
    // On the Exchange stream (the gateway's path), one message of three calls: the unary answers.
    const viaExchange = await exchangeAuthChecks(['root', 'nobody', 'bot']);
    const unary = async (name: string): Promise<unknown> => ((await client.authCheck(name)) as { check: unknown }).check;
    expect(viaExchange.get('1')).toEqual(await unary('root'));
    expect(viaExchange.get('2')).toEqual(await unary('nobody'));
    expect(viaExchange.get('3')).toEqual(await unary('bot'));
    expect((viaExchange.get('1') as { password_hash: Buffer }).password_hash.toString()).toBe(new TextDecoder().decode(HASH));
  });

  it('checks permissions at apply: no identity, stale revision, root', async () => {
    expect(await client.propose(putRequest('a', '1'), 5000)).toEqual({ kind: 'error', code: 3, message: 'etcdserver: user name is empty' });
    expect(await client.propose(as('root', authRevision - 1, { type: 'put', request: { key: u8('a'), value: u8('1') } }), 5000)).toEqual({
      kind: 'error',
      code: 3,
      message: 'etcdserver: revision of auth store is old',
    });
    expect(await ok(as('root', authRevision, { type: 'put', request: { key: u8('a'), value: u8('1') } }))).toMatchObject({ revision: expect.any(Number) });
  });

  it('issues simple tokens <prefix>.<log index> that resolve after their entry is applied; malformed or future ones do not', async () => {
    const token = await authenticate('root', 'abcdefghijklmnop');
    expect(token).toMatch(/^abcdefghijklmnop\.\d+$/);
    expect(await client.resolveToken(token, 1000)).toEqual({ valid: true, username: 'root', auth_revision: String(authRevision), leader_address: '' }); // the leader names no other
    expect((await client.resolveToken('not-a-token', 1000)).valid).toBe(false);
    // Beyond the leader's log: no token can have that index, so the leader does not wait for it.
    const started = performance.now();
    expect((await client.resolveToken('abcdefghijklmnop.99999999', 10_000)).valid).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('expires idle simple tokens after the sliding TTL, keeps used ones', async () => {
    const idle = await authenticate('root', 'idleidleidleidle');
    const used = await authenticate('root', 'usedusedusedused');
    const deadline = performance.now() + (TOKEN_TTL_SECONDS + 3) * 1000;
    while (performance.now() < deadline) {
      expect((await client.resolveToken(used, 1000)).valid).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect((await client.resolveToken(idle, 1000)).valid).toBe(false);
    expect((await client.resolveToken(used, 1000)).valid).toBe(true);
  });
});

describe('internal API: refusals', () => {
  it('answers an oversized proposal with RequestTooLarge and garbage with INVALID_ARGUMENT', async () => {
    // above --max-request-bytes (1.5 MiB) but within the gRPC limit (plus 512 KiB), as etcd answers it
    const big = await rawPropose(Buffer.alloc(1.8 * 1024 * 1024, 1));
    expect(big).toEqual({ error: { code: 3, message: 'etcdserver: request is too large' }, result: 'error', applied_index: '0' });
    const garbage = (await rawPropose(Buffer.from('not an entry'))) as ServiceError;
    expect([garbage.code, garbage.details]).toEqual([3, 'invalid entry: not an encoded ApplyRequest']);
  });

  it('serves only read-only operations on Read', async () => {
    await expect(client.read(putRequest('a', '2'), true, 1000)).rejects.toMatchObject({ code: 3, details: 'Read serves Range and read-only Txn, not put' });
  });

  it('reports status and readiness', async () => {
    const status = await client.status();
    expect(status.leader_id).toBe('1');
    expect(Number(status.applied_index)).toBe(Number(status.commit_index));
    const ready = await fetch(`http://127.0.0.1:${cluster.member(1n).httpPort}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${cluster.member(1n).httpPort}/metrics`)).text();
    for (const name of ['wal_fdatasync_duration_seconds_bucket', 'proposals_total', 'applied_index', 'leader_changes_total', 'raft_peer_dropped_messages_total']) {
      if (name === 'raft_peer_dropped_messages_total') continue; // a one-member cluster has no peers to drop for
      expect(metrics).toContain(`ward_raft_node_${name}`);
    }
  });
});
