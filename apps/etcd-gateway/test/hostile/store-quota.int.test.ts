// A client that writes until the members run out of memory: the store has etcd's backend quota
// (RAFT_NODE_QUOTA_BACKEND_BYTES, here 64 KiB), so once the retained records reach it a Put, a
// Txn with a put and a LeaseGrant are refused with etcd's error, nothing written before is lost,
// no member stops, and deleting plus compacting makes room again. The refusal is compared with
// real etcd 3.4.23 over its quota (etcdctl's output and the gRPC status).
import { EtcdGrpcClient, eventually, runEtcdctl, startEtcdCluster, type EtcdCluster, type GrpcOutcome } from '@ward/testing/etcd-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWardCluster, type WardCluster } from '../support/ward-cluster';

const QUOTA_BYTES = 64 * 1024;
const VALUE = 'v'.repeat(1024);
const NO_SPACE = { ok: false, code: 8, details: 'etcdserver: mvcc: database space exceeded' };

let ward: WardCluster;
let etcd: EtcdCluster;
let wardClient: EtcdGrpcClient;
let etcdClient: EtcdGrpcClient;

beforeAll(async () => {
  [ward, etcd] = await Promise.all([
    startWardCluster({ raftEnv: { RAFT_NODE_QUOTA_BACKEND_BYTES: String(QUOTA_BYTES) } }),
    // etcd's empty backend file is already larger than this, so its first put is over the quota.
    startEtcdCluster({ members: 1, extraArgs: ['--quota-backend-bytes', '16384'] }),
  ]);
  wardClient = new EtcdGrpcClient(ward.gateways[0]!.grpcAddress);
  etcdClient = new EtcdGrpcClient(etcd.clientEndpoint);
}, 180_000);

afterAll(async () => {
  wardClient?.close();
  etcdClient?.close();
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

const refusal = (outcome: GrpcOutcome): { ok: boolean; code?: number; details?: string } => (outcome.ok ? { ok: true } : { ok: false, code: outcome.code, details: outcome.details });
const put = (client: EtcdGrpcClient, key: string, value = VALUE): Promise<GrpcOutcome> => client.call('KV', 'Put', { key: Buffer.from(key), value: Buffer.from(value) });

describe('the backend quota (RAFT_NODE_QUOTA_BACKEND_BYTES)', () => {
  it('refuses writes past the quota with etcd error, keeps what was written, and makes room after delete and compaction', async () => {
    let accepted = 0;
    let last: GrpcOutcome | undefined;
    for (let i = 0; i < 200; i++) {
      last = await put(wardClient, `q/${String(i).padStart(3, '0')}`);
      if (!last.ok) break;
      accepted++;
    }
    // Each put retains 256 + 5 + 1024 bytes: about 50 fit in 64 KiB.
    expect(accepted).toBeGreaterThan(40);
    expect(accepted).toBeLessThan(52);
    expect(refusal(last!)).toEqual(NO_SPACE);

    // The same refusal as etcd's, through etcdctl and over gRPC, for a put, a txn that puts and a lease grant.
    const wardCtl = await runEtcdctl({ endpoints: [ward.gateways[0]!.grpcAddress], args: ['put', 'q/more', 'x'] });
    const etcdCtl = await runEtcdctl({ endpoints: [etcd.clientEndpoint], args: ['put', 'q/more', 'x'] });
    // The client's retry warning carries a timestamp and a connection id; its last line is the answer.
    const lastLine = (stderr: string): string | undefined => stderr.trim().split('\n').at(-1);
    expect(lastLine(etcdCtl.stderr)).toBe('Error: etcdserver: mvcc: database space exceeded');
    expect({ exit: wardCtl.exitCode, stderr: lastLine(wardCtl.stderr) }).toEqual({ exit: etcdCtl.exitCode, stderr: lastLine(etcdCtl.stderr) });
    const txn = { success: [{ request_put: { key: Buffer.from('q/txn'), value: Buffer.from('x') } }] };
    for (const client of [wardClient, etcdClient]) {
      expect(refusal(await client.call('KV', 'Txn', txn))).toEqual(NO_SPACE);
      expect(refusal(await client.call('Lease', 'LeaseGrant', { TTL: 60 }))).toEqual(NO_SPACE);
    }

    // Nothing accepted was lost, and reads still work.
    const all = await wardClient.call<{ count: string; kvs: Array<{ value: Buffer }> }>('KV', 'Range', { key: Buffer.from('q/'), range_end: Buffer.from('q0') });
    expect(all.ok && Number(all.response.count)).toBe(accepted);
    expect(all.ok && all.response.kvs.every((kv) => kv.value.toString() === VALUE)).toBe(true);

    // Deletes are never refused; compaction gives the space back at once.
    const deleted = await wardClient.call<{ deleted: string; header: { revision: string } }>('KV', 'DeleteRange', { key: Buffer.from('q/'), range_end: Buffer.from('q0') });
    expect(deleted.ok && Number(deleted.response.deleted)).toBe(accepted);
    expect(refusal(await put(wardClient, 'q/after-delete'))).toEqual(NO_SPACE);
    const revision = deleted.ok ? deleted.response.header.revision : '0';
    expect(refusal(await wardClient.call('KV', 'Compact', { revision }))).toEqual({ ok: true });
    expect(refusal(await put(wardClient, 'q/after-compaction'))).toEqual({ ok: true });
    expect(refusal(await wardClient.call('Lease', 'LeaseGrant', { TTL: 60 }))).toEqual({ ok: true });

    // No member stopped, and each one shows its size and quota.
    expect(ward.cluster.members.every((member) => member.process?.running === true)).toBe(true);
    for (const member of ward.cluster.members) {
      await eventually(`member ${member.name} publishes its store size`, async () => {
        const text = await (await fetch(`http://127.0.0.1:${member.httpPort}/metrics`)).text();
        const retained = Number(/^ward_raft_node_store_retained_bytes\{[^}]*\} (\d+)$/m.exec(text)?.[1]);
        return /^ward_raft_node_quota_backend_bytes\{[^}]*\} 65536$/m.test(text) && retained > 0 && retained < QUOTA_BYTES ? true : undefined;
      }, 10_000);
    }
  });
});
