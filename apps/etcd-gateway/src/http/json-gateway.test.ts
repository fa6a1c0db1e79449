// etcd's JSON gateway through fastify's inject, in front of a one-member applier node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from '../config';
import { createGateway, type Gateway } from '../gateway';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

let node: ApplierNode;
let gateway: Gateway;

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await gateway.injectHttp({ method: 'POST', url, payload: typeof body === 'string' ? body : JSON.stringify(body), headers });
  return { status: response.statusCode, json: response.json() as Record<string, unknown> };
}

beforeAll(async () => {
  node = await startApplierNode();
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, httpBodyLimitBytes: 64 * 1024, logLevel: 'silent' }), {
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
});

afterAll(async () => {
  await gateway?.stop();
  await node?.stop();
});

describe('JSON gateway', () => {
  it('put and range with base64 keys, int64 strings, curl’s form content type', async () => {
    const put = await post('/v3/kv/put', { key: b64('foo'), value: b64('bar') }, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(put).toEqual({ status: 200, json: { header: { cluster_id: '4660', member_id: '81', revision: '2', raft_term: '2' } } });
    const range = await post('/v3/kv/range', { key: b64('foo') });
    expect(range.status).toBe(200);
    expect(range.json).toMatchObject({ kvs: [{ key: b64('foo'), value: b64('bar'), create_revision: '2', mod_revision: '2', version: '1' }], count: '1' });
  });

  it('txn with etcd’s upper-case enum names', async () => {
    const txn = await post('/v3/kv/txn', {
      compare: [{ key: b64('foo'), result: 'EQUAL', target: 'VALUE', value: b64('bar') }],
      success: [{ request_put: { key: b64('foo'), value: b64('baz') } }],
    });
    expect(txn.status).toBe(200);
    expect(txn.json).toMatchObject({ succeeded: true, responses: [{ response_put: { header: { revision: '3' } } }] });
  });

  it('errors have etcd’s body and grpc-gateway’s HTTP status', async () => {
    expect(await post('/v3/kv/put', { key: '', value: b64('x') })).toEqual({
      status: 400,
      json: { error: 'etcdserver: key is not provided', message: 'etcdserver: key is not provided', code: 3 },
    });
    expect(await post('/v3/auth/authenticate', { name: 'root', password: 'x' })).toEqual({
      status: 400,
      json: { error: 'etcdserver: authentication is not enabled', message: 'etcdserver: authentication is not enabled', code: 9 },
    });
    expect(await post('/v3/maintenance/hash', { revision: '1000' })).toEqual({
      status: 400,
      json: { error: 'etcdserver: mvcc: required revision is a future revision', message: 'etcdserver: mvcc: required revision is a future revision', code: 11 },
    });
    expect(await post('/v3/maintenance/hash', {})).toMatchObject({ status: 200, json: { hash: expect.any(Number) } });
  });

  it('refuses malformed bodies and wrong types with code 3; ignores unknown fields as etcd 3.4 does', async () => {
    expect(await post('/v3/kv/range', '{"key":')).toMatchObject({ status: 400, json: { code: 3, message: 'invalid JSON in request body' } });
    expect(await post('/v3/kv/range', { key: '***' })).toMatchObject({ status: 400, json: { code: 3 } });
    expect(await post('/v3/kv/range', { key: b64('a'), limit: true })).toEqual({
      status: 400,
      json: { error: 'json: cannot unmarshal bool into Go value of type int64', message: 'json: cannot unmarshal bool into Go value of type int64', code: 3 },
    });
    expect(await post('/v3/kv/range', { key: b64('a'), nope: true })).toMatchObject({ status: 200, json: { header: { cluster_id: '4660' } } });
    expect(await post('/v3/kv/range', `{"constructor":1,"__proto__":{"key":"eA=="},"key":"${b64('a')}"}`)).toMatchObject({ status: 200 });
  });

  it('int64 fields given as JSON numbers beyond 2^53 keep every digit (etcd’s lease IDs)', async () => {
    // etcd's gateway reads {"ID": 7587899244529336581} exactly; a double would make it ...336600.
    const granted = await post('/v3/lease/grant', '{"ID": 7587899244529336581, "TTL": 30}');
    expect(granted).toMatchObject({ status: 200, json: { ID: '7587899244529336581', TTL: '30' } });
    expect(await post('/v3/kv/put', `{"key": "${b64('leased')}", "value": "${b64('v')}", "lease": 7587899244529336581}`)).toMatchObject({ status: 200 });
    const range = await post('/v3/kv/range', { key: b64('leased') });
    expect(range.json).toMatchObject({ kvs: [{ key: b64('leased'), lease: '7587899244529336581' }] });
    // Digits inside strings are left alone; a number out of int64 range is still refused.
    expect(await post('/v3/kv/put', `{"key": "${b64('k')}", "value": "${b64('v')}", "lease": "7587899244529336581"}`)).toMatchObject({ status: 200 });
    expect(await post('/v3/kv/put', `{"key": "${b64('k')}", "value": "${b64('v')}", "lease": 9223372036854775808}`)).toMatchObject({ status: 400, json: { code: 3 } });
  });

  it('an empty body is an empty request (etcd’s gateway ignores EOF)', async () => {
    const response = await gateway.injectHttp({ method: 'POST', url: '/v3/auth/status' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ header: { cluster_id: '4660' } });
  });

  it('a body over the limit: 413 with etcd’s body shape', async () => {
    const response = await post('/v3/kv/put', { key: b64('k'), value: 'A'.repeat(100 * 1024) });
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: 8 });
  });

  it('the full auth round trip: users, enable, authenticate, Authorization header (with or without Bearer)', async () => {
    expect((await post('/v3/auth/user/add', { name: 'root', password: 'rootpw' })).status).toBe(200);
    expect((await post('/v3/auth/user/grant', { user: 'root', role: 'root' })).status).toBe(200);
    expect((await post('/v3/auth/enable', {})).status).toBe(200);
    const login = await post('/v3/auth/authenticate', { name: 'root', password: 'rootpw' });
    const token = login.json['token'] as string;
    expect(token).toMatch(/^[A-Za-z]{16}\.\d+$/);
    expect((await post('/v3/kv/range', { key: b64('foo') })).json).toMatchObject({ code: 3, message: 'etcdserver: user name is empty' });
    expect((await post('/v3/kv/range', { key: b64('foo') }, { authorization: token })).status).toBe(200);
    expect((await post('/v3/kv/range', { key: b64('foo') }, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect(await post('/v3/kv/range', { key: b64('foo') }, { authorization: 'garbage' })).toEqual({
      status: 401,
      json: { error: 'etcdserver: invalid auth token', message: 'etcdserver: invalid auth token', code: 16 },
    });
    const status = await post('/v3/auth/status', {});
    expect(status.json).toMatchObject({ enabled: true });
    const roles = await post('/v3/auth/role/add', { name: 'r' }, { authorization: token });
    expect(roles.status).toBe(200);
    await post('/v3/auth/role/grant', { name: 'r', perm: { permType: 'READWRITE', key: b64('a'), range_end: b64('b') } }, { authorization: token });
    await post('/v3/auth/role/grant', { name: 'r', perm: { key: b64('c') } }, { authorization: token });
    expect((await post('/v3/auth/role/get', { role: 'r' }, { authorization: token })).json).toMatchObject({
      perm: [{ permType: 'READWRITE', key: b64('a'), range_end: b64('b') }, { key: b64('c') }],
    });
  });

  it('MemberList and Status over HTTP', async () => {
    const token = (await post('/v3/auth/authenticate', { name: 'root', password: 'rootpw' })).json['token'] as string;
    const members = await post('/v3/cluster/member/list', {}, { authorization: token });
    expect(members.json).toMatchObject({ members: [{ ID: '81', name: 'node-1', clientURLs: [gateway.advertisedClientUrl] }] });
    expect((await post('/v3/maintenance/status', {})).json).toMatchObject({ code: 3, message: 'etcdserver: user name is empty' });
    expect((await post('/v3/maintenance/status', {}, { authorization: token })).json).toMatchObject({ version: '3.7.0' });
  });

  it('health, readiness and metrics beside it', async () => {
    expect((await gateway.injectHttp({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await gateway.injectHttp({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const metrics = await gateway.injectHttp({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('ward_gateway_grpc_server_handled_total');
    expect(metrics.body).toContain('ward_gateway_watch_streams');
  });
});
