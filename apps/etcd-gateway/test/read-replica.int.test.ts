// The gateway's read replica against real raft-node processes: linearizable reads answered from it
// stay linearizable while the member that feeds it is cut off from its peers (its state stops
// moving while the others commit) and while it is killed and restarted (the replica follows
// another member, going on from its own state); its feed moves to the leader, and with the
// leadership; serializable reads through a gateway see the writes that gateway acknowledged (fed by
// the leader or by a follower); a gateway started late syncs from a snapshot. Reads are checked by the linearizability checker
// over the recorded history, not by comparing single values.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { LocalCluster, buildRaftNodeBundle } from '@ward/testing/cluster';
import { startNetProxy, type NetProxy } from '@ward/testing/net-proxy';
import { HistoryRecorder, checkLinearizability, formatCheckResult, kvModel, type KvInput, type KvOutput } from '@ward/testing/linearizability';
import { createLogger } from '@ward/platform/logging';
import { createGateway, gatewayConfig, type Gateway } from '../src/index';
import { etcdTestClient, type EtcdTestClient } from '../src/testing/etcd-client';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const bytes = (text: string): Buffer => Buffer.from(text);

let cluster: LocalCluster<NetProxy>;
const gateways: Gateway[] = [];
const clients: EtcdTestClient[] = [];
const logLines: string[] = [];
/** Each gateway's own log lines. */
const gatewayLogs = new Map<Gateway, string[]>();

async function addGateway(extra: { readReplicaMaxBytes?: number; readReplicaFeedFromLeader?: boolean } = {}): Promise<Gateway> {
  const own: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), own.push(String(chunk)), done()) });
  const config = gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: cluster.members.map((m) => m.apiAddress), bcryptCost: 4, logLevel: 'info', ...extra });
  const gateway = await createGateway(config, { logger: createLogger({ name: 'etcd-gateway', level: 'info', destination }) });
  gateways.push(gateway);
  gatewayLogs.set(gateway, own);
  return gateway;
}

function clientOf(gateway: Gateway): EtcdTestClient {
  const client = etcdTestClient(gateway.grpcAddress);
  clients.push(client);
  return client;
}

async function metric(gateway: Gateway, line: string): Promise<number> {
  const text = (await gateway.injectHttp({ method: 'GET', url: '/metrics' })).body;
  const found = text.split('\n').find((l) => l.startsWith(line + ' '));
  return found === undefined ? Number.NaN : Number(found.slice(line.length + 1));
}

/** The member the gateway's replica synced from or resumed at last (from its log). */
function followedMember(gateway = gateways[0]!): bigint {
  const synced = gatewayLogs.get(gateway)!.filter((l) => l.includes('read replica synced') || l.includes('read replica resumed'));
  return BigInt((JSON.parse(synced.at(-1)!) as { member: string }).member);
}

async function waitSynced(gateway: Gateway, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await metric(gateway, 'ward_gateway_replica_synced')) !== 1) {
    if (Date.now() > deadline) throw new Error('the read replica did not sync');
    await sleep(50);
  }
}

function linksOf(member: bigint): NetProxy[] {
  return cluster.members.filter((m) => m.id !== member).flatMap((m) => [cluster.proxy(member, m.id), cluster.proxy(m.id, member)]);
}

beforeAll(async () => {
  cluster = await LocalCluster.start<NetProxy>({
    entry: buildRaftNodeBundle(),
    size: 3,
    proxy: (target) => startNetProxy(target),
    env: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '500', RAFT_NODE_SNAPSHOT_CATCH_UP_ENTRIES_COUNT: '100', RAFT_NODE_LOG_LEVEL: 'warn' },
  });
  await cluster.waitForLeader(30_000);
  await waitSynced(await addGateway(), 20_000);
}, 120_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.allSettled(gateways.map((g) => g.stop()));
  await cluster?.stop();
});

describe('read replica', () => {
  it('keeps linearizable reads linearizable while its member is partitioned, then killed and restarted', async () => {
    const gateway = gateways[0]!;
    const recorder = new HistoryRecorder<KvInput, KvOutput>(() => performance.now());
    let stop = false;
    let counter = 0;
    const runClient = async (id: number): Promise<void> => {
      const etcd = clientOf(gateway);
      while (!stop) {
        const key = `lin/k${(counter * 7 + id) % 4}`;
        counter += 1;
        if (counter % 2 === 0) {
          const value = `c${id}-${counter}`;
          const handle = recorder.invoke(id, { kind: 'put', key, value });
          const result = await etcd.call('KV', 'Put', { key: bytes(key), value: bytes(value) });
          // A failed put may still have been applied: its outcome is unknown.
          if (result.ok) recorder.complete(handle, { kind: 'put' });
          else recorder.lose(handle);
        } else {
          const handle = recorder.invoke(id, { kind: 'get', key });
          const result = await etcd.call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key: bytes(key) });
          if (result.ok) recorder.complete(handle, { kind: 'get', value: result.value.kvs.length === 0 ? null : result.value.kvs[0]!.value.toString() });
          else recorder.fail(handle);
        }
      }
    };
    const running = [0, 1, 2, 3, 4].map(runClient);
    const resyncsBefore = await metric(gateway, 'ward_gateway_replica_resyncs');
    const resumesBefore = await metric(gateway, 'ward_gateway_replica_resumes');
    await sleep(1500);
    // Its member cut off: that member's state stops while the other two commit.
    const partitioned = followedMember();
    for (const link of linksOf(partitioned)) link.setFault('both', { kind: 'blackhole' });
    await sleep(3000);
    for (const link of linksOf(partitioned)) link.heal();
    await sleep(1500);
    // Its member killed: the feed breaks and the replica follows another member.
    const killed = followedMember();
    await cluster.kill(killed);
    await sleep(3000);
    await cluster.startMember(killed);
    await sleep(2000);
    stop = true;
    await Promise.all(running);

    const history = recorder.history();
    const check = checkLinearizability(kvModel, history, { budget: { maxSteps: 50_000_000 } });
    expect(check.verdict, check.verdict === 'ok' ? '' : formatCheckResult(kvModel, history, check)).toBe('ok');
    const reads = history.filter((op) => op.input.kind === 'get' && op.status === 'ok').length;
    expect(reads).toBeGreaterThan(200);
    // The replica answered reads, re-synced after losing its member, and is synced again.
    expect(await metric(gateway, 'ward_gateway_replica_reads{served="replica"}')).toBeGreaterThan(100);
    expect(await metric(gateway, 'ward_gateway_replica_resyncs')).toBeGreaterThan(resyncsBefore);
    // At least the kill: the next member's log still held the entries after the replica's index.
    expect(await metric(gateway, 'ward_gateway_replica_resumes')).toBeGreaterThan(resumesBefore);
    await waitSynced(gateway, 20_000);
  }, 180_000);

  it('feeds its replica from the leader, and moves the feed with the leadership, going on from its state', async () => {
    const gateway = gateways[0]!;
    await waitSynced(gateway, 20_000);
    const leader = await cluster.waitForLeader(10_000);
    await vi.waitFor(() => expect(followedMember(gateway)).toBe(leader), { timeout: 10_000, interval: 50 });
    const [moves, resyncs, resumes] = await Promise.all(['moves', 'resyncs', 'resumes'].map((name) => metric(gateway, `ward_gateway_replica_${name}`)));
    const etcd = clientOf(gateway);
    const next = cluster.members.find((m) => m.id !== leader)!.id;
    const moved = await etcd.call('Maintenance', 'MoveLeader', { targetID: next.toString() });
    expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true });
    expect(await cluster.waitForLeader(10_000)).toBe(next);
    await vi.waitFor(() => expect(followedMember(gateway)).toBe(next), { timeout: 10_000, interval: 50 });
    expect(await metric(gateway, 'ward_gateway_replica_moves')).toBeGreaterThan(moves);
    // Not a failure of the feed, and no snapshot: the new leader's log held the replica's index.
    expect(await metric(gateway, 'ward_gateway_replica_resyncs')).toBe(resyncs);
    expect(await metric(gateway, 'ward_gateway_replica_resumes')).toBeGreaterThan(resumes);
    await waitSynced(gateway, 10_000);
    const served = await metric(gateway, 'ward_gateway_replica_reads{served="replica"}');
    for (let i = 0; i < 20; i++) {
      expect(await etcd.call('KV', 'Put', { key: bytes('moved/k'), value: bytes(`v${i}`) })).toMatchObject({ ok: true });
      const read = await etcd.call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key: bytes('moved/k'), serializable: true });
      expect(read.ok && read.value.kvs[0]?.value.toString()).toBe(`v${i}`);
    }
    expect(await metric(gateway, 'ward_gateway_replica_reads{served="replica"}')).toBeGreaterThan(served);
  }, 60_000);

  it('serializable reads through a gateway see every write that gateway acknowledged, even fed by a follower', async () => {
    // A gateway that keeps the feed where it reached (GATEWAY_READ_REPLICA_FEED_FROM_LEADER=false).
    const gateway = await addGateway({ readReplicaFeedFromLeader: false });
    await waitSynced(gateway, 20_000);
    const etcd = clientOf(gateway);
    // A follower applies after the leader answered the proposal: the replica lags the answer.
    const followed = followedMember(gateway);
    if ((await cluster.waitForLeader(10_000)) === followed) {
      const other = cluster.members.find((m) => m.id !== followed)!.id;
      const moved = await etcd.call('Maintenance', 'MoveLeader', { targetID: other.toString() });
      expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true });
    }
    expect(await cluster.waitForLeader(10_000)).not.toBe(followed);
    for (let i = 0; i < 200; i++) {
      const key = bytes(`ryw/${i % 10}`);
      expect(await etcd.call('KV', 'Put', { key, value: bytes(`v${i}`) })).toMatchObject({ ok: true });
      const read = await etcd.call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key, serializable: true });
      expect(read.ok && read.value.kvs[0]?.value.toString()).toBe(`v${i}`);
    }
    // Its feed stayed with the follower.
    expect(followedMember(gateway)).toBe(followed);
    expect(await metric(gateway, 'ward_gateway_replica_moves')).toBe(0);
  }, 60_000);

  it('a gateway started after the writes syncs from a snapshot and answers as the members do', async () => {
    const writer = clientOf(gateways[0]!);
    for (let i = 0; i < 300; i++) expect(await writer.call('KV', 'Put', { key: bytes(`late/${i}`), value: bytes(`v${i}`) })).toMatchObject({ ok: true });
    const late = await addGateway();
    await waitSynced(late, 20_000);
    const reader = clientOf(late);
    const mine = await reader.call<{ kvs: { key: Buffer; value: Buffer }[]; count: string }>('KV', 'Range', { key: bytes('late/'), range_end: bytes('late0'), serializable: true });
    expect(mine.ok && mine.value.count).toBe('300');
    const fromMembers = await writer.call<{ kvs: { key: Buffer; value: Buffer }[] }>('KV', 'Range', { key: bytes('late/'), range_end: bytes('late0') });
    expect(mine.ok && fromMembers.ok).toBe(true);
    if (mine.ok && fromMembers.ok) expect(mine.value.kvs).toEqual(fromMembers.value.kvs);
    expect(await metric(late, 'ward_gateway_replica_reads{served="replica"}')).toBeGreaterThan(0);
  }, 60_000);

  it('a gateway whose replica takes less than the state is refused it by the member, asks no more for a while, and reads go to the members', async () => {
    const writer = clientOf(gateways[0]!);
    const value = Buffer.alloc(1024, 'v');
    for (let i = 0; i < 1100; i++) expect(await writer.call('KV', 'Put', { key: bytes(`big/${String(i).padStart(4, '0')}`), value })).toMatchObject({ ok: true });
    const offBefore = logLines.filter((l) => l.includes('read replica off')).length;
    const small = await addGateway({ readReplicaMaxBytes: 1024 * 1024 });
    const deadline = Date.now() + 20_000;
    while (logLines.filter((l) => l.includes('read replica off')).length === offBefore) {
      if (Date.now() > deadline) throw new Error('the replica was not turned down');
      await sleep(50);
    }
    const off = logLines.filter((l) => l.includes('read replica off'));
    // The member refused it once sized: nothing of the state was sent.
    expect(off.at(-1)).toContain('more than the 1048576 the replica takes');
    await sleep(2000);
    expect(logLines.filter((l) => l.includes('read replica off')).length).toBe(off.length);
    expect(await metric(small, 'ward_gateway_replica_synced')).toBe(0);
    const reader = clientOf(small);
    const read = await reader.call<{ count: string }>('KV', 'Range', { key: bytes('big/'), range_end: bytes('big0'), serializable: true, count_only: true });
    expect(read.ok && read.value.count).toBe('1100');
    expect(await metric(small, 'ward_gateway_replica_reads{served="members"}')).toBeGreaterThan(0);
  }, 60_000);
});
