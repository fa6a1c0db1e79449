// Simple tokens kept in a snapshot still expire: a member booted from (or sent) a snapshot did not
// see those tokens' entries applied, yet as leader it must expire them after the sliding TTL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPasswordHash, type ApplyOperation, type ApplyRequest } from '@ward/etcd/apply';
import { LocalCluster, buildRaftNodeBundle, type NodeApiClient } from '@ward/testing/cluster';

const u8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const HASH = toPasswordHash(u8('$2b$10$C6UzMDM.H6dfI/f/IKxGhu8ATXq6Yn3ML9bL1rJ6GyqW3G1P4WgD6'));
const TOKEN_TTL_SECONDS = 2;
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    entry: buildRaftNodeBundle(),
    size: 1,
    env: { RAFT_NODE_SIMPLE_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS), RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '3' },
  });
  await cluster.waitForLeader(30_000);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

const as = (username: string, authRevision: number, operation: ApplyOperation): ApplyRequest => ({ header: { id: 0n, username, authRevision }, operation });

async function ok(client: NodeApiClient, request: ApplyRequest): Promise<unknown> {
  const answer = await client.propose(request, 5000);
  if (answer.kind !== 'ok') throw new Error(`expected ok, got kind ${answer.kind}`);
  return answer.response.response;
}

describe('simple-token TTL across a restart from a snapshot', () => {
  it('a token issued before the restart, idle since, expires after the TTL', async () => {
    const client = cluster.client(1n);
    await ok(client, as('', 0, { type: 'userAdd', request: { name: 'root', passwordHash: HASH, noPassword: false } }));
    await ok(client, as('', 0, { type: 'userGrantRole', request: { user: 'root', role: 'root' } }));
    await ok(client, as('', 0, { type: 'authEnable' }));
    const { token } = (await ok(client, as('', 0, { type: 'authenticate', request: { name: 'root', simpleTokenPrefix: 'beforebeforebefo' } }))) as { token: string };
    const revision = Number(((await client.authCheck('root')) as { check: { auth_revision: string } }).check.auth_revision);
    // Enough entries after the token for a snapshot that holds it.
    for (let i = 0; i < 4; i++) await ok(client, as('root', revision, { type: 'put', request: { key: u8(`k${i}`), value: u8('v') } }));
    await cluster.kill(1n);
    await cluster.startMember(1n);
    await cluster.waitForLeader(30_000);
    const restarted = cluster.client(1n);
    // Idle for the TTL and the leader's once-a-second expiry pass, then polled (a poll slides it).
    await new Promise((resolve) => setTimeout(resolve, (TOKEN_TTL_SECONDS + 2.5) * 1000));
    expect((await restarted.resolveToken(token, 1000)).valid).toBe(false);
    // A token issued after the restart is tracked as before.
    const fresh = (await ok(restarted, as('', 0, { type: 'authenticate', request: { name: 'root', simpleTokenPrefix: 'afterafterafterr' } }))) as { token: string };
    expect((await restarted.resolveToken(fresh.token, 1000)).valid).toBe(true);
  }, 90_000);
});
