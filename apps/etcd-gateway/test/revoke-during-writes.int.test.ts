// Security: a role is revoked while its holder writes in a loop. No write ordered after the revoke
// may succeed: every acknowledged write's revision is at most the revoke's, every write started
// after the revoke answered fails, and the stored keys agree. Simple tokens and JWTs, writers on
// two gateways (a simple token issued at one gateway is used at the other).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdTestClient } from '../src/testing/etcd-client';
import { bytes, login, must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

interface WriteOutcome {
  readonly startedAfterRevoke: boolean;
  readonly ok: boolean;
  readonly revision?: number;
  readonly code?: number;
  readonly details?: string;
}

/** The checker: writes that succeeded although ordered after the revoke (must be none). */
export function writesAfterRevoke(history: readonly WriteOutcome[], revokeRevision: number): WriteOutcome[] {
  return history.filter((write) => write.ok && (write.startedAfterRevoke || (write.revision ?? Infinity) > revokeRevision));
}

let ward: WardCluster;
let keyDir: string;

beforeAll(async () => {
  ward = await startWardCluster();
  keyDir = await mkdtemp(join(tmpdir(), 'ward-jwt-'));
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(join(keyDir, 'priv.pem'), pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  await writeFile(join(keyDir, 'pub.pem'), pair.publicKey.export({ type: 'spki', format: 'pem' }));
  await ward.addGateway(); // a second simple-token gateway
  await ward.addGateway({ authToken: `jwt,sign-method=RS256,priv-key=${join(keyDir, 'priv.pem')},pub-key=${join(keyDir, 'pub.pem')},ttl=5m` });
  await setUpAuth(ward.client(), { rootPassword: 'root-pw', user: 'alice', password: 'alice-pw', prefix: 'foo/' });
  const root = ward.client();
  await must(root.call('Auth', 'UserAdd', { name: 'bob', password: 'bob-pw' }, await login(root, 'root', 'root-pw')));
}, 120_000);

afterAll(async () => {
  await ward?.stop();
  await rm(keyDir, { recursive: true, force: true });
});

/** Writes `foo/<tag>-<n>` until stopped, recording every outcome. */
function writer(etcd: EtcdTestClient, token: string, tag: string, state: { revoked: boolean; stop: boolean }, history: WriteOutcome[]): Promise<void> {
  return (async () => {
    for (let n = 0; !state.stop && n < 2000; n++) {
      const startedAfterRevoke = state.revoked;
      const result = await etcd.call<{ header: { revision: string } }>('KV', 'Put', { key: bytes(`foo/${tag}-${n}`), value: bytes('v') }, token);
      history.push(result.ok ? { startedAfterRevoke, ok: true, revision: Number(result.value.header.revision) } : { startedAfterRevoke, ok: false, code: result.code, details: result.details });
    }
  })();
}

async function revokeWhileWriting(user: string, password: string, role: string, gateways: number[]): Promise<{ history: WriteOutcome[]; revokeRevision: number }> {
  const root = ward.client();
  const rootToken = await login(root, 'root', 'root-pw');
  await must(root.call('Auth', 'UserGrantRole', { user, role }, rootToken));
  const state = { revoked: false, stop: false };
  const history: WriteOutcome[] = [];
  const writers = gateways.map((index, i) => {
    const etcd = ward.client(ward.gateways[index]);
    return login(etcd, user, password).then((token) => writer(etcd, token, `${user}-${index}-${i}-${Date.now()}`, state, history));
  });
  await new Promise((resolve) => setTimeout(resolve, 700));
  const revoke = await must<{ header: { revision: string } }>(root.call('Auth', 'UserRevokeRole', { name: user, role }, rootToken));
  state.revoked = true;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  state.stop = true;
  await Promise.all(writers);
  return { history, revokeRevision: Number(revoke.header.revision) };
}

describe('revoking a role during a write loop', () => {
  it('the checker flags a write acknowledged after the revoke (injected history)', () => {
    const history: WriteOutcome[] = [
      { startedAfterRevoke: false, ok: true, revision: 10 },
      { startedAfterRevoke: false, ok: true, revision: 12 },
      { startedAfterRevoke: true, ok: true, revision: 13 },
    ];
    expect(writesAfterRevoke(history, 11)).toHaveLength(2);
    expect(writesAfterRevoke(history.slice(0, 1), 11)).toHaveLength(0);
  });

  it('simple tokens, two gateways: no write ordered after the revoke succeeds', async () => {
    const { history, revokeRevision } = await revokeWhileWriting('alice', 'alice-pw', 'rw-foo/', [0, 1, 0, 1]);
    const successes = history.filter((w) => w.ok);
    const afterRevoke = history.filter((w) => w.startedAfterRevoke);
    expect(successes.length).toBeGreaterThan(5);
    expect(afterRevoke.length).toBeGreaterThan(5);
    expect(writesAfterRevoke(history, revokeRevision)).toEqual([]);
    for (const write of afterRevoke) expect(write).toMatchObject({ ok: false, code: 7, details: 'etcdserver: permission denied' });
    // The store agrees: every key alice wrote carries a revision from before the revoke.
    const root = ward.client();
    const token = await login(root, 'root', 'root-pw');
    const range = await must<{ kvs: Array<{ mod_revision: string }> }>(root.call('KV', 'Range', { key: bytes('foo/alice'), range_end: bytes('foo/alicf') }, token));
    expect(range.kvs.length).toBe(successes.length);
    for (const kv of range.kvs) expect(Number(kv.mod_revision)).toBeLessThanOrEqual(revokeRevision);
  }, 60_000);

  it('JWTs: a token older than the revoke is refused (`revision of auth store is old`), never applied', async () => {
    const { history, revokeRevision } = await revokeWhileWriting('bob', 'bob-pw', 'rw-foo/', [2, 2]);
    expect(history.filter((w) => w.ok).length).toBeGreaterThan(5);
    expect(writesAfterRevoke(history, revokeRevision)).toEqual([]);
    for (const write of history.filter((w) => w.startedAfterRevoke)) {
      expect(write).toMatchObject({ ok: false, code: 3, details: 'etcdserver: revision of auth store is old' });
    }
    // A fresh JWT after the revoke: permission denied.
    const etcd = ward.client(ward.gateways[2]);
    const fresh = await login(etcd, 'bob', 'bob-pw');
    expect(await etcd.call('KV', 'Put', { key: bytes('foo/late'), value: bytes('v') }, fresh)).toEqual({ ok: false, code: 7, details: 'etcdserver: permission denied' });
  }, 60_000);
});
