// A simple token in use keeps sliding even when the gateway resolving it talks to a follower:
// the leader, which proposes the expiry of idle tokens, must learn of every use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, login, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

const TOKEN_TTL_SECONDS = 3;
const ROOT_PASSWORD = 'Root-pw-41c9e07d2b';
const PASSWORD = 'Dana-pw-93be1f6a70';
let ward: WardCluster;

beforeAll(async () => {
  ward = await startWardCluster({ raftEnv: { RAFT_NODE_SIMPLE_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS) } });
  await setUpAuth(ward.client(), { rootPassword: ROOT_PASSWORD, user: 'dana', password: PASSWORD, prefix: 'd/' });
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

describe('sliding simple-token TTL through a gateway that reads at a follower', () => {
  it('a token used every half second stays valid well past the TTL', async () => {
    const leader = await ward.cluster.waitForLeader(20_000);
    const followersFirst = [...ward.cluster.members].sort((a, b) => Number(a.id === leader) - Number(b.id === leader)).map((m) => m.apiAddress);
    // A second gateway that has never proposed: its first member is a follower, and reads are
    // served there without a redirect.
    const reader = ward.client(await ward.addGateway({ nodeEndpoints: followersFirst }));
    const token = await login(ward.client(), 'dana', PASSWORD);
    const until = performance.now() + (TOKEN_TTL_SECONDS + 4) * 1000;
    let reads = 0;
    while (performance.now() < until) {
      const answer = await reader.call('KV', 'Range', { key: bytes('d/x') }, token);
      expect(answer, `read ${reads}`).toMatchObject({ ok: true });
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(reads).toBeGreaterThan(2 * TOKEN_TTL_SECONDS);
  }, 60_000);
});
