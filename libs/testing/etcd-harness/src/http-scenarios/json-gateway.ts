import type { HttpScenario } from '../http-scenario';
import { TEST_ROLE, TEST_USER } from '../scenarios/common';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const errorBody = (message: string, code: number) => ({ error: message, message, code });

/** etcd's JSON gateway with auth (spec §8.4: base64 keys, `Authorization: <token>`, error bodies). */
export const jsonGateway: HttpScenario = {
  name: 'JSON gateway with auth',
  spec: '§4.1 transport, §8.4 JSON gateway, §8.2 items 9 and 11',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  steps: [
    { label: 'authenticate', path: '/v3/auth/authenticate', body: { name: 'test-user', password: 'pass' }, save: 'user', expect: { status: 200, body: { token: '<simple-token>' } } },
    { label: 'wrong password', path: '/v3/auth/authenticate', body: { name: 'test-user', password: 'bad' }, expect: { status: 400, body: errorBody('etcdserver: authentication failed, invalid user ID or password', 3) } },
    { label: 'put foo', path: '/v3/kv/put', body: { key: b64('foo'), value: b64('bar') }, token: 'user', expect: { status: 200, body: {} } },
    { label: 'range foo', path: '/v3/kv/range', body: { key: b64('foo') }, token: 'user', expect: { status: 200, body: { kvs: [{ key: b64('foo'), create_revision: 'base+1', mod_revision: 'base+1', version: '1', value: b64('bar') }], count: '1' } } },
    { label: 'put bar denied', path: '/v3/kv/put', body: { key: b64('bar'), value: b64('x') }, token: 'user', expect: { status: 403, body: errorBody('etcdserver: permission denied', 7) } },
    { label: 'range without token', path: '/v3/kv/range', body: { key: b64('foo') }, expect: { status: 400, body: errorBody('etcdserver: user name is empty', 3) } },
    { label: 'garbage token', path: '/v3/kv/range', body: { key: b64('foo') }, literalAuthorization: 'garbage', expect: { status: 401, body: errorBody('etcdserver: invalid auth token', 16) } },
    { label: 'empty key', path: '/v3/kv/range', body: { key: '' }, token: 'user', expect: { status: 400, body: errorBody('etcdserver: key is not provided', 3) } },
    { label: 'txn', path: '/v3/kv/txn', body: { compare: [{ key: b64('foo'), result: 'EQUAL', target: 'VALUE', value: b64('bar') }], success: [{ requestPut: { key: b64('foo'), value: b64('baz') } }] }, token: 'user', expect: { status: 200, body: { succeeded: true, responses: [{ response_put: {} }] } } },
    { label: 'delete with prev_kv', path: '/v3/kv/deleterange', body: { key: b64('foo'), prev_kv: true }, token: 'user', expect: { status: 200, body: { deleted: '1', prev_kvs: [{ key: b64('foo'), create_revision: 'base+1', mod_revision: 'base+2', version: '2', value: b64('baz') }] } } },
    { label: '§8.2.9 Bearer token', path: '/v3/kv/range', body: { key: b64('foo') }, bearer: 'user', expect: { status: 200, body: {} }, etcd34: { status: 401, body: errorBody('etcdserver: invalid auth token', 16) } },
    { label: '§8.2.11 auth status', path: '/v3/auth/status', body: {}, expect: { status: 200, body: { enabled: true } }, etcd34: { status: 404, text: 'Not Found\n' } },
  ],
};
