import { describe, expect, it } from 'vitest';
import { encodeJsonRequest, etcdEnumName, messageType, responseToJson } from './json-codec';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

function decode(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  const type = messageType(typeName);
  return type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: String, defaults: false }) as Record<string, unknown>;
}

function refusal(run: () => unknown): { grpcCode: number; message: string } {
  try {
    run();
  } catch (error) {
    return error as { grpcCode: number; message: string };
  }
  throw new Error('expected a refusal');
}

describe('etcdEnumName', () => {
  it.each([
    ['Equal', 'EQUAL'],
    ['NotEqual', 'NOT_EQUAL'],
    ['Readwrite', 'READWRITE'],
    ['Noput', 'NOPUT'],
    ['NOSPACE', 'NOSPACE'],
    ['Ascend', 'ASCEND'],
  ])('%s → %s', (proto, etcd) => expect(etcdEnumName(proto)).toBe(etcd));
});

describe('JSON requests (grpc-gateway jsonpb rules)', () => {
  it('reads base64 bytes, int64 strings and etcd enum names, with proto or camelCase field names', () => {
    const bytes = encodeJsonRequest('etcdserverpb.RangeRequest', { key: b64('foo'), rangeEnd: b64('fop'), limit: '10', sort_order: 'DESCEND', sort_target: 2 });
    expect(decode('etcdserverpb.RangeRequest', bytes)).toEqual({ key: b64('foo'), range_end: b64('fop'), limit: '10', sort_order: 'Descend', sort_target: 'Create' });
  });

  it('reads a txn with oneof ops and compare enums', () => {
    const bytes = encodeJsonRequest('etcdserverpb.TxnRequest', {
      compare: [{ key: b64('k'), result: 'NOT_EQUAL', target: 'VALUE', value: b64('v') }],
      success: [{ request_put: { key: b64('k'), value: b64('w') } }],
      failure: [{ requestRange: { key: b64('k') } }],
    });
    const txn = decode('etcdserverpb.TxnRequest', bytes) as { compare: Array<{ result: string; target: string }>; success: Array<Record<string, unknown>>; failure: Array<Record<string, unknown>> };
    expect(txn.compare[0]).toMatchObject({ result: 'NotEqual', target: 'Value' });
    expect(txn.success[0]).toHaveProperty('request_put');
    expect(txn.failure[0]).toHaveProperty('request_range');
  });

  it('accepts URL-safe and unpadded base64 as Go does, and an absent body as the empty request', () => {
    const bytes = encodeJsonRequest('etcdserverpb.PutRequest', { key: Buffer.from([0xfb, 0xff]).toString('base64url'), value: 'YQ' });
    expect(decode('etcdserverpb.PutRequest', bytes)).toEqual({ key: Buffer.from([0xfb, 0xff]).toString('base64'), value: b64('a') });
    expect(encodeJsonRequest('etcdserverpb.AuthStatusRequest', undefined)).toHaveLength(0);
  });

  it.each([
    ['an unknown field', 'etcdserverpb.RangeRequest', { key: b64('a'), bogus: 1 }, 'unknown field "bogus" in etcdserverpb.RangeRequest'],
    ['bytes that are not base64', 'etcdserverpb.RangeRequest', { key: 'not base64!' }, 'invalid base64 in field RangeRequest.key'],
    ['an unknown enum name', 'etcdserverpb.RangeRequest', { key: b64('a'), sort_order: 'SIDEWAYS' }, 'invalid value for enum field RangeRequest.sort_order: "SIDEWAYS"'],
    ['an int64 out of range', 'etcdserverpb.RangeRequest', { limit: '9223372036854775808' }, 'field RangeRequest.limit is out of range'],
    ['a fractional integer', 'etcdserverpb.RangeRequest', { limit: 1.5 }, 'field RangeRequest.limit must be an integer'],
    ['a string for a bool', 'etcdserverpb.RangeRequest', { serializable: 'yes' }, 'field RangeRequest.serializable must be a boolean'],
    ['a non-object body', 'etcdserverpb.RangeRequest', [1, 2], 'RangeRequest must be a JSON object'],
    ['a scalar for a message', 'etcdserverpb.AuthUserAddRequest', { name: 'u', options: 3 }, 'AuthUserAddRequest.options must be a JSON object'],
  ])('refuses %s with INVALID_ARGUMENT', (_case, type, json, message) => {
    const error = refusal(() => encodeJsonRequest(type, json));
    expect(error.grpcCode).toBe(3);
    expect(error.message).toBe(message);
  });

  it('reads a lone surrogate escape in a string field as U+FFFD, as Go’s decoder does, at any length', () => {
    const encoded = (json: string): string => Buffer.from(encodeJsonRequest('etcdserverpb.AuthenticateRequest', JSON.parse(json))).toString('hex');
    const long = 'y'.repeat(64);
    expect(encoded('{"name":"x\\udcff"}')).toBe(`0a04${'78'}efbfbd`);
    expect(encoded(`{"password":"${long}\\ud800"}`)).toBe(`1243${Buffer.from(long).toString('hex')}efbfbd`);
    expect(encoded('{"name":"\\ud83d\\ude00"}')).toBe('0a04f09f9880');
  });

  it('bounds nesting depth (a deeply nested txn is refused, not recursed into)', () => {
    let txn: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) txn = { success: [{ request_txn: txn }] };
    expect(refusal(() => encodeJsonRequest('etcdserverpb.TxnRequest', txn)).message).toBe('request nests too deeply');
  });
});

describe('JSON answers (what etcd prints)', () => {
  it('int64 as strings, bytes as base64, zero values and false flags left out', () => {
    const type = messageType('etcdserverpb.RangeResponse');
    const bytes = type
      .encode(type.fromObject({ header: { cluster_id: '18446744073709551615', member_id: '1', revision: '9', raft_term: '2' }, kvs: [{ key: Buffer.from('foo'), value: Buffer.from('bar'), create_revision: '9', mod_revision: '9', version: '1' }], count: '1', more: false }))
      .finish();
    expect(responseToJson('etcdserverpb.RangeResponse', bytes)).toEqual({
      header: { cluster_id: '18446744073709551615', member_id: '1', revision: '9', raft_term: '2' },
      kvs: [{ key: b64('foo'), value: b64('bar'), create_revision: '9', mod_revision: '9', version: '1' }],
      count: '1',
    });
  });

  it('enums by etcd name; the zero value (READ, PUT) is omitted as in etcd 3.4', () => {
    const perms = responseToJson('etcdserverpb.AuthRoleGetResponse', {
      perm: [
        { permType: 'Read', key: Buffer.from('a') },
        { permType: 'Readwrite', key: Buffer.from('b'), range_end: Buffer.from('c') },
      ],
    });
    expect(perms).toEqual({ perm: [{ key: b64('a') }, { permType: 'READWRITE', key: b64('b'), range_end: b64('c') }] });
  });

  it('objects the gateway built keep the proto field names (MemberList, Status)', () => {
    const members = responseToJson('etcdserverpb.MemberListResponse', { members: [{ ID: '10', name: 'n1', peerURLs: ['http://p'], clientURLs: ['http://c'], isLearner: false }] });
    expect(members).toEqual({ members: [{ ID: '10', name: 'n1', peerURLs: ['http://p'], clientURLs: ['http://c'] }] });
  });
});
