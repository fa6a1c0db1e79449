import { describe, expect, it } from 'vitest';
import { MAX_TXN_NESTING_DEPTH } from '@ward/etcd/kv-store';
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

  // Texts as etcd 3.4.23's gateway answers them (grpc-gateway v1, jsonpb, Go's encoding/json).
  it.each([
    ['bytes that are not base64', 'etcdserverpb.RangeRequest', { key: 'not base64!' }, 'invalid base64 in field RangeRequest.key'],
    ['a number for bytes', 'etcdserverpb.RangeRequest', { key: 1 }, 'json: cannot unmarshal number into Go value of type []uint8'],
    ['an object for bytes', 'etcdserverpb.RangeRequest', { key: {} }, 'json: cannot unmarshal object into Go value of type []uint8'],
    ['a byte array with a string in it', 'etcdserverpb.RangeRequest', { key: ['YQ=='] }, 'json: cannot unmarshal string into Go value of type uint8'],
    ['a byte array with 256 in it', 'etcdserverpb.RangeRequest', { key: [256] }, 'json: cannot unmarshal number 256 into Go value of type uint8'],
    ['an unknown enum name', 'etcdserverpb.RangeRequest', { key: b64('a'), sort_order: 'SIDEWAYS' }, 'unknown value "SIDEWAYS" for enum etcdserverpb.RangeRequest_SortOrder'],
    ['a bool for an enum', 'etcdserverpb.RangeRequest', { sort_order: true }, 'json: cannot unmarshal bool into Go value of type etcdserverpb.RangeRequest_SortOrder'],
    ['a fraction for an enum', 'etcdserverpb.RangeRequest', { sort_order: 1.5 }, 'json: cannot unmarshal number 1.5 into Go value of type etcdserverpb.RangeRequest_SortOrder'],
    ['an int64 out of range', 'etcdserverpb.RangeRequest', { limit: '9223372036854775808' }, 'json: cannot unmarshal number 9223372036854775808 into Go value of type int64'],
    ['a fractional integer', 'etcdserverpb.RangeRequest', { limit: 1.5 }, 'json: cannot unmarshal number 1.5 into Go value of type int64'],
    ['a fraction quoted', 'etcdserverpb.RangeRequest', { limit: '1.5' }, 'json: cannot unmarshal number 1.5 into Go value of type int64'],
    ['a word for an integer', 'etcdserverpb.RangeRequest', { limit: 'abc' }, "invalid character 'a' looking for beginning of value"],
    ['an empty string for an integer', 'etcdserverpb.RangeRequest', { limit: '' }, 'unexpected end of JSON input'],
    ['a bool for an integer', 'etcdserverpb.RangeRequest', { limit: true }, 'json: cannot unmarshal bool into Go value of type int64'],
    ['an array for an integer', 'etcdserverpb.RangeRequest', { limit: [1] }, 'json: cannot unmarshal array into Go value of type int64'],
    ['a string for a bool', 'etcdserverpb.RangeRequest', { serializable: 'yes' }, 'json: cannot unmarshal string into Go value of type bool'],
    ['a number for a string', 'etcdserverpb.AuthUserAddRequest', { name: 1 }, 'json: cannot unmarshal number into Go value of type string'],
    ['an array body', 'etcdserverpb.RangeRequest', [1, 2], 'json: cannot unmarshal array into Go value of type map[string]json.RawMessage'],
    ['a string body', 'etcdserverpb.RangeRequest', 'str', 'json: cannot unmarshal string into Go value of type map[string]json.RawMessage'],
    ['a scalar for a message', 'etcdserverpb.AuthUserAddRequest', { name: 'u', options: 3 }, 'json: cannot unmarshal number into Go value of type map[string]json.RawMessage'],
    ['an array for a message', 'etcdserverpb.AuthRoleGrantPermissionRequest', { name: 'r', perm: [] }, 'json: cannot unmarshal array into Go value of type map[string]json.RawMessage'],
    ['an object for a repeated field', 'etcdserverpb.TxnRequest', { success: {} }, 'json: cannot unmarshal object into Go value of type []json.RawMessage'],
    ['a number in a list of messages', 'etcdserverpb.TxnRequest', { success: [1] }, 'json: cannot unmarshal number into Go value of type map[string]json.RawMessage'],
    ['an array for a oneof message', 'etcdserverpb.TxnRequest', { success: [{ request_range: [1] }] }, 'json: cannot unmarshal array into Go value of type map[string]json.RawMessage'],
  ])('refuses %s with INVALID_ARGUMENT', (_case, type, json, message) => {
    const error = refusal(() => encodeJsonRequest(type, json));
    expect(error.grpcCode).toBe(3);
    expect(error.message).toBe(message);
  });

  it('ignores unknown fields at any depth, JavaScript property names included, as etcd 3.4 does', () => {
    const plain = encodeJsonRequest('etcdserverpb.RangeRequest', { key: b64('app/') });
    for (const name of ['bogus', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'isPrototypeOf', 'Key', 'KEY']) {
      const body = JSON.parse(`{"${name}":1,"key":"${b64('app/')}"}`) as unknown;
      expect(encodeJsonRequest('etcdserverpb.RangeRequest', body), name).toEqual(plain);
    }
    const nested = JSON.parse(`{"compare":[{"key":"${b64('k')}","__proto__":{"key":"x"},"constructor":{"a":[1]},"result":"EQUAL","target":"VALUE","value":"${b64('v')}"}],"success":[{"request_range":{"key":"${b64('k')}","toString":2}}]}`) as unknown;
    expect(decode('etcdserverpb.TxnRequest', encodeJsonRequest('etcdserverpb.TxnRequest', nested))).toEqual({
      compare: [{ key: b64('k'), result: 'Equal', target: 'Value', value: b64('v') }],
      success: [{ request_range: { key: b64('k') } }],
    });
  });

  it('the last of duplicate keys wins, as in Go', () => {
    const body = JSON.parse(`{"key":"${b64('a')}","key":"${b64('b')}"}`) as unknown;
    expect(decode('etcdserverpb.RangeRequest', encodeJsonRequest('etcdserverpb.RangeRequest', body))).toEqual({ key: b64('b') });
  });

  it('reads bytes given as an array of numbers, as Go does', () => {
    expect(decode('etcdserverpb.RangeRequest', encodeJsonRequest('etcdserverpb.RangeRequest', { key: [97, 98] }))).toEqual({ key: b64('ab') });
  });

  it('reads a lone surrogate escape in a string field as U+FFFD, as Go’s decoder does, at any length', () => {
    const encoded = (json: string): string => Buffer.from(encodeJsonRequest('etcdserverpb.AuthenticateRequest', JSON.parse(json))).toString('hex');
    const long = 'y'.repeat(64);
    expect(encoded('{"name":"x\\udcff"}')).toBe(`0a04${'78'}efbfbd`);
    expect(encoded(`{"password":"${long}\\ud800"}`)).toBe(`1243${Buffer.from(long).toString('hex')}efbfbd`);
    expect(encoded('{"name":"\\ud83d\\ude00"}')).toBe('0a04f09f9880');
  });

  it('bounds nesting depth (a deeply nested txn is refused with etcd\'s txn text, not recursed into)', () => {
    let txn: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) txn = { success: [{ request_txn: txn }] };
    expect(refusal(() => encodeJsonRequest('etcdserverpb.TxnRequest', txn))).toMatchObject({ grpcCode: 3, message: 'etcdserver: too many operations in txn request' });
  });

  it('takes a txn nested as deep as the txn bound, and prints its answer (responses nest one level more)', () => {
    const nest = (levels: number, innermost: Record<string, unknown>, field: string, op: string): Record<string, unknown> => {
      let txn: Record<string, unknown> = { [field]: [innermost] };
      for (let level = 1; level < levels; level++) txn = { [field]: [{ [op]: txn }] };
      return txn;
    };
    const request = nest(MAX_TXN_NESTING_DEPTH, { request_range: { key: 'aw==' } }, 'success', 'request_txn');
    expect(encodeJsonRequest('etcdserverpb.TxnRequest', request).length).toBeGreaterThan(0);
    const kv = { key: 'aw==', value: 'dg==', create_revision: '2', mod_revision: '2', version: '1' };
    const answer = nest(MAX_TXN_NESTING_DEPTH, { response_range: { header: {}, kvs: [kv], count: '1' } }, 'responses', 'response_txn');
    const type = messageType('etcdserverpb.TxnResponse');
    const json = responseToJson('etcdserverpb.TxnResponse', type.encode(type.fromObject(answer)).finish());
    let inner = json as { responses: Array<Record<string, unknown>> };
    for (let level = 1; level < MAX_TXN_NESTING_DEPTH; level++) inner = inner.responses[0]!['response_txn'] as typeof inner;
    expect(inner.responses[0]).toEqual({ response_range: { header: {}, kvs: [kv], count: '1' } });
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
