// Wire compatibility: ward's generated etcd protos must put the same bytes on the wire as the
// etcd3 client's own protobuf load and as the field numbers of etcd's .proto files say.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { EMPTY_BYTES_DEFAULT, etcdMessageType, etcdPackageDefinition, etcdServiceDefinition, wardNodeGrpc, wardNodeServiceDefinition } from './index';

const require = createRequire(import.meta.url);
// etcd3 loads its protos with its own copy of @grpc/proto-loader and protobufjs: an independent encoder.
const etcd3Loader = require(require.resolve('@grpc/proto-loader', { paths: [require.resolve('etcd3')] }));
const etcd3ProtoPath = require.resolve('etcd3/proto/rpc.proto');
const etcd3Definition = etcd3Loader.loadSync(etcd3ProtoPath, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });

type Method = { requestSerialize(v: unknown): Buffer; responseSerialize(v: unknown): Buffer; requestDeserialize(b: Buffer): unknown; responseDeserialize(b: Buffer): unknown };
const method = (definition: Record<string, unknown>, service: string, name: string): Method =>
  (definition[`etcdserverpb.${service}`] as Record<string, Method>)[name]!;

/** Protobuf varint of a non-negative integer below 2^53. */
function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}
const tag = (field: number, wireType: number): number[] => varint(field * 8 + wireType);
const lengthDelimited = (field: number, bytes: number[]): number[] => [...tag(field, 2), ...varint(bytes.length), ...bytes];
const ascii = (text: string): number[] => [...Buffer.from(text, 'utf8')];

describe('etcd v3 wire compatibility', () => {
  it('encodes a PutRequest exactly as its field numbers say (key=1, value=2, lease=3, prev_kv=4)', () => {
    const request = { key: Buffer.from('foo'), value: Buffer.from('bar'), lease: '7587869342117285', prev_kv: true };
    const ours = method(etcdPackageDefinition(), 'KV', 'Put').requestSerialize(request);
    const byHand = Buffer.from([
      ...lengthDelimited(1, ascii('foo')),
      ...lengthDelimited(2, ascii('bar')),
      ...tag(3, 0),
      ...varint(7587869342117285),
      ...tag(4, 0),
      1,
    ]);
    expect(ours.toString('hex')).toBe(byHand.toString('hex'));
    const theirs = method(etcd3Definition, 'KV', 'Put').requestSerialize(request);
    expect(ours.toString('hex')).toBe(theirs.toString('hex'));
  });

  it('encodes a RangeResponse with header, kvs, more and count like etcd3', () => {
    const response = {
      header: { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '42', raft_term: '3' },
      kvs: [
        { key: Buffer.from('a'), create_revision: '2', mod_revision: '40', version: '5', value: Buffer.from('1') },
        { key: Buffer.from('b'), create_revision: '41', mod_revision: '41', version: '1', value: Buffer.from('') },
      ],
      more: true,
      count: '10',
    };
    const ours = method(etcdPackageDefinition(), 'KV', 'Range').responseSerialize(response);
    const theirs = method(etcd3Definition, 'KV', 'Range').responseSerialize(response);
    expect(ours.toString('hex')).toBe(theirs.toString('hex'));

    // The first kv by hand: KeyValue{key=1, create_revision=2, mod_revision=3, version=4, value=5}
    const firstKv = [...lengthDelimited(1, ascii('a')), ...tag(2, 0), 2, ...tag(3, 0), 40, ...tag(4, 0), 5, ...lengthDelimited(5, ascii('1'))];
    expect(ours.includes(Buffer.from(lengthDelimited(2, firstKv)))).toBe(true);
    // more=3 (bool) then count=4 (int64) close the message.
    expect(ours.subarray(ours.length - 4).toString('hex')).toBe(Buffer.from([...tag(3, 0), 1, ...tag(4, 0), 10]).toString('hex'));
  });

  it('decodes what etcd3 encodes, keeping 64-bit ids exact as strings', () => {
    const header = { cluster_id: '18446744073709551615', member_id: '9223372036854775809', revision: '9007199254740993', raft_term: '1' };
    const bytes = method(etcd3Definition, 'KV', 'Range').responseSerialize({ header, kvs: [], more: false, count: '0' });
    const decoded = method(etcdPackageDefinition(), 'KV', 'Range').responseDeserialize(bytes) as { header: typeof header };
    expect(decoded.header).toEqual(header);
  });

  it('carries a Txn with a oneof request and compare target, naming the set member', () => {
    // etcd3's protos spell enum values in PascalCase (Greater, Mod); the numbers are etcd's.
    const txn = {
      compare: [{ result: 'Greater', target: 'Mod', key: Buffer.from('k'), mod_revision: '5' }],
      success: [{ request_put: { key: Buffer.from('k'), value: Buffer.from('v') } }],
      failure: [{ request_range: { key: Buffer.from('k') } }],
    };
    const ours = method(etcdPackageDefinition(), 'KV', 'Txn').requestSerialize(txn);
    const theirs = method(etcd3Definition, 'KV', 'Txn').requestSerialize(txn);
    expect(ours.toString('hex')).toBe(theirs.toString('hex'));
    const decoded = method(etcdPackageDefinition(), 'KV', 'Txn').requestDeserialize(ours) as {
      compare: { target_union: string; target: string }[];
      success: { request: string }[];
    };
    // Compare{result=1 (GREATER), target=2 (MOD), key=3, mod_revision=6 (oneof target_union)}
    const compareBytes = [...tag(1, 0), 1, ...tag(2, 0), 2, ...lengthDelimited(3, ascii('k')), ...tag(6, 0), 5];
    expect(ours.subarray(0, compareBytes.length + 2).toString('hex')).toBe(Buffer.from(lengthDelimited(1, compareBytes)).toString('hex'));
    expect(decoded.compare[0]!.target_union).toBe('mod_revision');
    expect(decoded.compare[0]!.target).toBe('Mod');
    expect(decoded.success[0]!.request).toBe('request_put');
  });

  it('gives an absent bytes field the one shared, frozen empty Buffer, and a set one its bytes', () => {
    const put = method(etcdPackageDefinition(), 'KV', 'Put');
    const bare = put.requestDeserialize(put.requestSerialize({ key: Buffer.from('k') })) as { key: Buffer; value: Buffer };
    expect(bare.key.toString()).toBe('k');
    expect(bare.value).toBe(EMPTY_BYTES_DEFAULT);
    expect(Buffer.isBuffer(bare.value) && bare.value.length === 0 && Object.isFrozen(bare.value)).toBe(true);
    const txn = method(etcdPackageDefinition(), 'KV', 'Txn');
    const decoded = txn.requestDeserialize(txn.requestSerialize({ success: [{ request_put: { key: Buffer.from('a'), value: Buffer.from('b') } }, { request_put: {} }] })) as {
      success: { request_put: { key: Buffer; value: Buffer } }[];
    };
    expect(decoded.success.map(({ request_put }) => [request_put.key.toString(), request_put.value.toString()])).toEqual([['a', 'b'], ['', '']]);
    expect(decoded.success[1]!.request_put.key).toBe(EMPTY_BYTES_DEFAULT);
  });

  it('exposes every etcd v3 service with its methods', () => {
    const expected: Record<string, string[]> = {
      KV: ['Range', 'Put', 'DeleteRange', 'Txn', 'Compact'],
      Watch: ['Watch'],
      Lease: ['LeaseGrant', 'LeaseRevoke', 'LeaseKeepAlive', 'LeaseTimeToLive', 'LeaseLeases'],
      Cluster: ['MemberAdd', 'MemberRemove', 'MemberUpdate', 'MemberList', 'MemberPromote'],
      Maintenance: ['Alarm', 'Status', 'Defragment', 'Hash', 'HashKV', 'Snapshot', 'MoveLeader', 'Downgrade'],
      Auth: [
        'AuthEnable', 'AuthDisable', 'AuthStatus', 'Authenticate', 'UserAdd', 'UserGet', 'UserList', 'UserDelete',
        'UserChangePassword', 'UserGrantRole', 'UserRevokeRole', 'RoleAdd', 'RoleGet', 'RoleList', 'RoleDelete',
        'RoleGrantPermission', 'RoleRevokePermission',
      ],
    };
    for (const [service, methods] of Object.entries(expected)) {
      const definition = etcdServiceDefinition(service as never);
      expect(Object.keys(definition).sort()).toEqual([...methods].sort());
    }
    expect(etcdServiceDefinition('KV').Range!.path).toBe('/etcdserverpb.KV/Range');
    expect(etcdServiceDefinition('Watch').Watch!.requestStream).toBe(true);
  });

  it('encodes single messages through the reflection root (mvccpb.KeyValue)', () => {
    const type = etcdMessageType('mvccpb.KeyValue');
    const bytes = type.encode(type.fromObject({ key: Buffer.from('x'), version: 1 })).finish();
    expect(Buffer.from(bytes).toString('hex')).toBe(Buffer.from([...lengthDelimited(1, ascii('x')), ...tag(4, 0), 1]).toString('hex'));
  });
});

describe('ward internal node API', () => {
  it('defines the gateway <-> raft-node service with every method', () => {
    const definition = wardNodeServiceDefinition();
    expect(Object.keys(definition).sort()).toEqual(['AuthCheck', 'Exchange', 'Follow', 'Lease', 'Maintain', 'MemberChange', 'MemberList', 'Propose', 'Read', 'ResolveToken', 'Snapshot', 'Status', 'Watch', 'WatchLeader']);
    expect(definition.Propose!.path).toBe('/wardnode.Node/Propose');
    expect(definition.Watch!.requestStream && definition.Watch!.responseStream).toBe(true);
    expect(!definition.Follow!.requestStream && definition.Follow!.responseStream).toBe(true);
    expect(!definition.WatchLeader!.requestStream && definition.WatchLeader!.responseStream).toBe(true);
    expect(typeof wardNodeGrpc().Node).toBe('function');
  });

  it('round-trips a NodeResponse carrying an etcd response, naming the oneof member', () => {
    const method = (wardNodeServiceDefinition() as unknown as Record<string, Method>).Propose!;
    const inner = Buffer.from([0x0a, 0x02, 0x08, 0x07]);
    const bytes = method.responseSerialize({ response: inner });
    expect(bytes.toString('hex')).toBe(Buffer.from(lengthDelimited(1, [...inner])).toString('hex'));
    const decoded = method.responseDeserialize(bytes) as { result: string; response: Buffer };
    expect(decoded.result).toBe('response');
    expect(Buffer.from(decoded.response).equals(inner)).toBe(true);
    const notLeader = method.responseDeserialize(method.responseSerialize({ not_leader: { leader_id: '18446744073709551615', leader_address: '127.0.0.1:1' } })) as {
      result: string;
      not_leader: { leader_id: string };
    };
    expect(notLeader.result).toBe('not_leader');
    expect(notLeader.not_leader.leader_id).toBe('18446744073709551615');
  });
});
