// The gateway over real gRPC in front of a one-member applier node: KV requests, etcd's
// validations and size limits, and what the cluster receives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from './config';
import { createGateway, type Gateway } from './gateway';
import { startApplierNode, type ApplierNode } from './testing/applier-node';
import { etcdTestClient, type EtcdTestClient } from './testing/etcd-client';

const b = (text: string): Buffer => Buffer.from(text);

let node: ApplierNode;
let gateway: Gateway;
let etcd: EtcdTestClient;

beforeAll(async () => {
  node = await startApplierNode();
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, logLevel: 'silent' }), {
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  etcd = etcdTestClient(gateway.grpcAddress);
});

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  await node?.stop();
});

describe('KV through the gateway', () => {
  it('puts and ranges; the answer carries the member header the node filled in', async () => {
    const put = await etcd.call('KV', 'Put', { key: b('foo'), value: b('bar') });
    expect(put).toMatchObject({ ok: true, value: { header: { cluster_id: String(0x1234), member_id: String(0x51), revision: '2', raft_term: '2' } } });
    const range = await etcd.call<{ kvs: Array<{ key: Buffer; value: Buffer }>; count: string }>('KV', 'Range', { key: b('foo') });
    expect(range.ok && range.value.kvs.map((kv) => [kv.key.toString(), kv.value.toString()])).toEqual([['foo', 'bar']]);
    expect(range.ok && range.value.count).toBe('1');
  });

  it('int64 fields at the ends of their range get etcd 3.4.23\'s answers (checked live), not an internal error', async () => {
    await etcd.call('KV', 'Put', { key: b('int64'), value: b('v') });
    const MAX = '9223372036854775807';
    const MIN = '-9223372036854775808';
    const summary = (result: Awaited<ReturnType<EtcdTestClient['call']>>) =>
      result.ok ? { ok: true, ...pick(result.value as Record<string, unknown>) } : { ok: false, code: result.code, details: result.details };
    const pick = (value: Record<string, unknown>) =>
      'succeeded' in value ? { succeeded: value['succeeded'] } : { count: value['count'], kvs: (value['kvs'] as unknown[]).length };
    const future = { ok: false, code: 11, details: 'etcdserver: mvcc: required revision is a future revision' };
    expect(summary(await etcd.call('KV', 'Range', { key: b('int64'), revision: MAX }))).toEqual(future);
    expect(summary(await etcd.call('KV', 'Range', { key: b('int64'), limit: MAX }))).toEqual({ ok: true, count: '1', kvs: 1 });
    expect(summary(await etcd.call('KV', 'Range', { key: b('int64'), min_mod_revision: MAX }))).toEqual({ ok: true, count: '1', kvs: 0 });
    expect(summary(await etcd.call('KV', 'Range', { key: b('int64'), max_mod_revision: MIN }))).toEqual({ ok: true, count: '1', kvs: 0 });
    expect(summary(await etcd.call('KV', 'Range', { key: b('int64'), revision: MIN }))).toEqual({ ok: true, count: '1', kvs: 1 });
    expect(summary(await etcd.call('KV', 'Compact', { revision: MAX }))).toEqual(future);
    expect(summary(await etcd.call('KV', 'Compact', { revision: MIN }))).toEqual({ ok: false, code: 11, details: 'etcdserver: mvcc: required revision has been compacted' });
    const txn = (compare: object) => etcd.call('KV', 'Txn', { compare: [{ key: b('int64'), ...compare }], success: [], failure: [] });
    expect(summary(await txn({ result: 'Equal', target: 'Mod', mod_revision: MAX }))).toEqual({ ok: true, succeeded: false });
    expect(summary(await txn({ result: 'Equal', target: 'Version', version: MAX }))).toEqual({ ok: true, succeeded: false });
    expect(summary(await txn({ result: 'Greater', target: 'Mod', mod_revision: MIN }))).toEqual({ ok: true, succeeded: true });
  });

  it('a read-only txn is a read, a txn with a write is proposed', async () => {
    const before = node.options.proposals.length;
    const readOnly = await etcd.call('KV', 'Txn', { compare: [], success: [{ request_range: { key: b('foo') } }], failure: [] });
    expect(readOnly.ok).toBe(true);
    expect(node.options.proposals.length).toBe(before);
    const writing = await etcd.call<{ succeeded: boolean }>('KV', 'Txn', {
      compare: [{ key: b('foo'), result: 'Equal', target: 'Value', value: b('bar') }],
      success: [{ request_put: { key: b('foo'), value: b('baz') } }],
      failure: [],
    });
    expect(writing).toMatchObject({ ok: true, value: { succeeded: true } });
    expect(node.options.proposals.length).toBe(before + 1);
  });

  it.each([
    ['Range', { key: b('') }],
    ['Put', { key: b(''), value: b('x') }],
    ['DeleteRange', { key: b('') }],
  ])('%s with an empty key: InvalidArgument `etcdserver: key is not provided`, nothing proposed', async (method, request) => {
    const before = node.options.proposals.length;
    expect(await etcd.call('KV', method, request)).toEqual({ ok: false, code: 3, details: 'etcdserver: key is not provided' });
    expect(node.options.proposals.length).toBe(before);
  });

  it('a txn with more than 128 operations: `too many operations in txn request`', async () => {
    const success = Array.from({ length: 129 }, (_, i) => ({ request_put: { key: b(`k${i}`), value: b('v') } }));
    expect(await etcd.call('KV', 'Txn', { compare: [], success, failure: [] })).toEqual({ ok: false, code: 3, details: 'etcdserver: too many operations in txn request' });
  });

  it('a value over the 1.5 MiB request limit: `etcdserver: request is too large`, nothing proposed', async () => {
    const before = node.options.proposals.length;
    const result = await etcd.call('KV', 'Put', { key: b('big'), value: Buffer.alloc(1.6 * 1024 * 1024, 0x61) });
    expect(result).toEqual({ ok: false, code: 3, details: 'etcdserver: request is too large' });
    expect(node.options.proposals.length).toBe(before);
  });

  it('a value just under the limit is accepted', async () => {
    const result = await etcd.call('KV', 'Put', { key: b('almost'), value: Buffer.alloc(1.5 * 1024 * 1024 - 1024, 0x61) });
    expect(result.ok).toBe(true);
  });

  it('a 10 MB request: RESOURCE_EXHAUSTED from gRPC before any handler, and the gateway keeps serving', async () => {
    const result = await etcd.call('KV', 'Put', { key: b('huge'), value: Buffer.alloc(10 * 1024 * 1024, 0x62) });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.code).toBe(8);
    expect((await etcd.call('KV', 'Range', { key: b('foo') })).ok).toBe(true);
  });

  it('a huge key inside the limits is served like any key', async () => {
    const key = Buffer.alloc(64 * 1024, 0x6b);
    expect((await etcd.call('KV', 'Put', { key, value: b('v') })).ok).toBe(true);
    const range = await etcd.call<{ count: string }>('KV', 'Range', { key, count_only: true });
    expect(range).toMatchObject({ ok: true, value: { count: '1' } });
  });

  it('compaction and its errors come from the cluster (future revision)', async () => {
    expect(await etcd.call('KV', 'Compact', { revision: '100000' })).toEqual({ ok: false, code: 11, details: 'etcdserver: mvcc: required revision is a future revision' });
  });

  it('the header stamped into each proposal is the anonymous one without a token', async () => {
    await etcd.call('KV', 'Put', { key: b('anon'), value: b('1') });
    const last = node.options.proposals.at(-1)!;
    expect(last.header.username).toBe('');
    expect(last.header.authRevision).toBe(0);
  });
});

describe('Maintenance and Cluster', () => {
  it('Status answers from the member', async () => {
    const status = await etcd.call<{ version: string; leader: string }>('Maintenance', 'Status', {});
    expect(status).toMatchObject({ ok: true, value: { version: '3.7.0', leader: String(0x51) } });
  });

  it('MemberList reports the gateway as every member’s client URL', async () => {
    const list = await etcd.call<{ members: Array<{ clientURLs: string[]; name: string }> }>('Cluster', 'MemberList', {});
    expect(list.ok && list.value.members).toEqual([expect.objectContaining({ name: 'node-1', clientURLs: [gateway.advertisedClientUrl] })]);
    expect(gateway.advertisedClientUrl).toBe(`http://${gateway.grpcAddress}`);
  });

  it('Defragment succeeds (nothing to compact on disk), MoveLeader to the leader itself too, another member is a bad transferee', async () => {
    expect(await etcd.call('Maintenance', 'Defragment', {})).toMatchObject({ ok: true, value: { header: { member_id: String(0x51) } } });
    expect(await etcd.call('Maintenance', 'MoveLeader', { targetID: String(0x51) })).toMatchObject({ ok: true });
    expect(await etcd.call('Maintenance', 'MoveLeader', { targetID: '7' })).toEqual({ ok: false, code: 9, details: 'etcdserver: bad leader transferee' });
  });

  it('HashKV passes the revision on: the key space’s hash there, etcd’s error beyond it', async () => {
    const current = await etcd.call<{ hash: number; header: { revision: string } }>('Maintenance', 'HashKV', {});
    expect(current.ok).toBe(true);
    const revision = current.ok ? current.value.header.revision : '0';
    expect(await etcd.call('Maintenance', 'HashKV', { revision })).toMatchObject({ ok: true, value: { hash: current.ok ? current.value.hash : -1 } });
    expect(await etcd.call('Maintenance', 'HashKV', { revision: String(Number(revision) + 1) })).toEqual({
      ok: false,
      code: 11,
      details: 'etcdserver: mvcc: required revision is a future revision',
    });
  });

});

describe('Lease', () => {
  it('LeaseGrant with ID 0 is proposed with ID 0 (the leader draws it) and answered with the ID drawn', async () => {
    const granted = await etcd.call<{ ID: string; TTL: string }>('Lease', 'LeaseGrant', { TTL: '10' });
    const last = node.options.proposals.at(-1)!;
    expect(last.operation.type).toBe('leaseGrant');
    const request = (last.operation as { request: { id: bigint; ttlSeconds: number } }).request;
    expect(request.id).toBe(0n);
    expect(request.ttlSeconds).toBe(10);
    expect(granted).toMatchObject({ ok: true, value: { TTL: '10' } });
    expect(BigInt(granted.ok ? granted.value.ID : '0')).toBeGreaterThan(0n);
  });

  it('LeaseGrant above etcd’s maximum TTL is refused before proposing', async () => {
    const before = node.options.proposals.length;
    expect(await etcd.call('Lease', 'LeaseGrant', { TTL: '9000000001' })).toEqual({ ok: false, code: 11, details: 'etcdserver: too large lease TTL' });
    expect(node.options.proposals.length).toBe(before);
  });
});
