// Hostile clients, the simple-token table (issue 21, point 5): a user with no roles that
// authenticates in a loop must not log anybody else out. The members run with a small table
// (RAFT_NODE_MAX_SIMPLE_TOKENS_COUNT=20, RAFT_NODE_MAX_SIMPLE_TOKENS_PER_USER_COUNT=5) so that
// the loop crosses both bounds many times: the looping user loses its own oldest tokens, never
// another user's. Tokens are checked through a gateway that never saw them, so every answer comes
// from the members' replicated table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, login, must, setUpAuth, startWardCluster, type WardCluster } from '../support/ward-cluster';

const MAX_TOKENS = 20;
const MAX_TOKENS_PER_USER = 5;
const ROOT_PASSWORD = 'Root-pw-5d0c7b21e4';
const ALICE_PASSWORD = 'Alice-pw-8f2a6c913d';
const MALLORY_PASSWORD = 'Mallory-pw-27e4b05f1c';

let ward: WardCluster;

beforeAll(async () => {
  ward = await startWardCluster({
    raftEnv: { RAFT_NODE_MAX_SIMPLE_TOKENS_COUNT: String(MAX_TOKENS), RAFT_NODE_MAX_SIMPLE_TOKENS_PER_USER_COUNT: String(MAX_TOKENS_PER_USER) },
  });
  const etcd = ward.client();
  await setUpAuth(etcd, { rootPassword: ROOT_PASSWORD, user: 'alice', password: ALICE_PASSWORD, prefix: 'a/' });
  const root = await login(etcd, 'root', ROOT_PASSWORD);
  await must(etcd.call('Auth', 'UserAdd', { name: 'mallory', password: MALLORY_PASSWORD }, root), 'UserAdd mallory');
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

describe('hostile: one user authenticating in a loop', () => {
  it('does not invalidate another user’s token; the looping user loses only its own oldest', async () => {
    const etcd = ward.client();
    const alice = await login(etcd, 'alice', ALICE_PASSWORD);
    const mallory: string[] = [];
    for (let i = 0; i < 4 * MAX_TOKENS; i++) mallory.push(await login(etcd, 'mallory', MALLORY_PASSWORD));

    const fresh = ward.client(await ward.addGateway());
    expect(await fresh.call('KV', 'Range', { key: bytes('a/x') }, alice)).toMatchObject({ ok: true });
    // mallory has no roles: a live token reads nothing (permission denied), an evicted one is invalid.
    expect(await fresh.call('KV', 'Range', { key: bytes('a/x') }, mallory.at(-1)!)).toMatchObject({ ok: false, code: 7 });
    expect(await fresh.call('KV', 'Range', { key: bytes('a/x') }, mallory.at(-MAX_TOKENS_PER_USER)!)).toMatchObject({ ok: false, code: 7 });
    expect(await fresh.call('KV', 'Range', { key: bytes('a/x') }, mallory.at(-MAX_TOKENS_PER_USER - 1)!)).toMatchObject({
      ok: false,
      code: 16,
      details: 'etcdserver: invalid auth token',
    });
  }, 120_000);
});
