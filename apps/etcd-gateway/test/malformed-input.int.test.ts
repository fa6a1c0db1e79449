// Security: malformed and oversized input — huge keys and values, 10 MB requests, garbage tokens,
// forged JWT-looking tokens, bytes that are not protobuf, absurd nesting — gets etcd's errors, and
// no service crashes: every raft-node process and the gateway still serve afterwards.
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, login, must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

let ward: WardCluster;
let token: string;

beforeAll(async () => {
  ward = await startWardCluster();
  await setUpAuth(ward.client(), { rootPassword: 'root-pw', user: 'dave', password: 'dave-pw', prefix: 'd/' });
  token = await login(ward.client(), 'dave', 'dave-pw');
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

function varint(value: number): Buffer {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A raw unary call with arbitrary request bytes. */
function rawCall(path: string, body: Buffer, metadata = new Metadata()): Promise<{ code: number; details: string } | 'ok'> {
  const Raw = makeGenericClientConstructor(
    { Call: { path, requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
    'Raw',
  );
  const client = new Raw(ward.gateways[0]!.grpcAddress, credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * 1024 * 1024 }) as unknown as Client & { Call: (b: Buffer, m: Metadata, cb: (e: ServiceError | null) => void) => void };
  return new Promise((resolve) => {
    client.Call(body, metadata, (error) => {
      client.close();
      resolve(error ? { code: error.code, details: error.details } : 'ok');
    });
  });
}

describe('malformed and oversized input', () => {
  it('10 MB and 3 MB requests: RESOURCE_EXHAUSTED before any work; 1.6 MB: `request is too large`', async () => {
    const etcd = ward.client();
    const ten = await etcd.call('KV', 'Put', { key: bytes('d/10mb'), value: Buffer.alloc(10 * 1024 * 1024, 1) }, token);
    expect(ten).toMatchObject({ ok: false, code: 8 });
    const three = await etcd.call('KV', 'Txn', { success: [{ request_put: { key: bytes('d/3mb'), value: Buffer.alloc(3 * 1024 * 1024, 1) } }] }, token);
    expect(three).toMatchObject({ ok: false, code: 8 });
    expect(await etcd.call('KV', 'Put', { key: bytes('d/1.6mb'), value: Buffer.alloc(1.6 * 1024 * 1024, 1) }, token)).toEqual({ ok: false, code: 3, details: 'etcdserver: request is too large' });
  }, 60_000);

  it('a 1 MB key and a 1.4 MB value are stored and read back through Raft', async () => {
    const etcd = ward.client();
    const key = Buffer.concat([bytes('d/'), Buffer.alloc(1024 * 1024, 0x6b)]);
    expect((await etcd.call('KV', 'Put', { key, value: bytes('v') }, token)).ok).toBe(true);
    const value = Buffer.alloc(1.4 * 1024 * 1024, 0x76);
    expect((await etcd.call('KV', 'Put', { key: bytes('d/big-value'), value }, token)).ok).toBe(true);
    const read = await must<{ kvs: Array<{ value: Buffer }> }>(etcd.call('KV', 'Range', { key: bytes('d/big-value') }, token));
    expect(read.kvs[0]!.value.equals(value)).toBe(true);
  }, 60_000);

  it.each([
    ['random text', 'not-a-token'],
    ['a simple token that was never issued', 'abcdefghijklmnop.7'],
    ['a simple token from the far future (bounded wait, then invalid)', 'abcdefghijklmnop.999999999'],
    ['an alg:none JWT', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"username":"root","revision":1}').toString('base64url')}.`],
    ['4 KB of junk', 'x'.repeat(4096)],
  ])('garbage token (%s): `invalid auth token`', async (_case, garbage) => {
    expect(await ward.client().call('KV', 'Range', { key: bytes('d/x') }, garbage)).toEqual({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
  }, 30_000);

  it('bytes that are not protobuf: refused by gRPC’s decoder, as etcd refuses them (code 13)', async () => {
    const junk = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    const answers = [];
    for (const path of ['/etcdserverpb.KV/Put', '/etcdserverpb.KV/Txn', '/etcdserverpb.Auth/Authenticate', '/etcdserverpb.Auth/UserAdd']) answers.push([path, await rawCall(path, junk)]);
    expect(answers).toEqual([
      ['/etcdserverpb.KV/Put', { code: 13, details: 'Error deserializing request' }],
      ['/etcdserverpb.KV/Txn', { code: 13, details: 'Error deserializing request' }],
      // Auth requests are decoded with their strings as bytes, which protobufjs bounds-checks (a string
      // field read past the end was cut short): refused as etcd 3.4.23 refuses all four (code 13,
      // `grpc: error unmarshalling request: proto: integer overflow`).
      ['/etcdserverpb.Auth/Authenticate', { code: 13, details: 'Error deserializing request' }],
      ['/etcdserverpb.Auth/UserAdd', { code: 13, details: 'Error deserializing request' }],
    ]);
  }, 30_000);

  it.each([
    [20, 'ok'],
    [127, 'ok'],
    [128, { code: 3, details: 'etcdserver: too many operations in txn request' }],
    [200, { code: 3, details: 'etcdserver: too many operations in txn request' }],
  ] as const)('a txn nested %i levels deep (raw bytes, no client-side check): 128 levels of TxnRequest at most, as etcd 3.4.23', async (depth, expected) => {
    const field = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([(tag << 3) | 2]), varint(body.length), body]);
    const put = field(2, Buffer.concat([field(1, bytes('d/deep')), field(2, bytes('v'))]));
    let txn = field(2, put); // TxnRequest{success: [RequestOp{request_put}]}
    for (let i = 0; i < depth; i++) txn = field(2, field(4, txn)); // success: [RequestOp{request_txn: txn}]
    const metadata = new Metadata();
    metadata.set('token', token);
    const answer = await rawCall('/etcdserverpb.KV/Txn', txn, metadata);
    expect(answer).toEqual(expected);
  }, 30_000);

  it('wrong field types over JSON: InvalidArgument, HTTP 400', async () => {
    const gateway = ward.gateways[0]!;
    for (const payload of ['{"key":5}', '{"key":"%%%"}', '[]', '{"key":"YQ==","limit":"many"}', '{'.repeat(10_000)]) {
      const response = await gateway.injectHttp({ method: 'POST', url: '/v3/kv/range', payload, headers: { authorization: token } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 3 });
    }
  }, 30_000);

  it('afterwards every service is alive and serving', async () => {
    for (const member of ward.cluster.members) expect(member.process?.running).toBe(true);
    await ward.cluster.waitForLeader(10_000);
    const etcd = ward.client();
    expect((await etcd.call('KV', 'Put', { key: bytes('d/alive'), value: bytes('1') }, token)).ok).toBe(true);
    expect((await ward.gateways[0]!.injectHttp({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 30_000);
});
