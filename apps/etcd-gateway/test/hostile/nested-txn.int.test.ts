// Hostile clients, point 2 (issue 21): a txn nested as deep as a client likes must get an answer
// that tells the truth. Within the nesting bound the txn is applied and answered (never "applied
// but reported failed", which a retrying client turns into a second write); one level past it, and
// far past it, it is refused with etcd's own error before anything is proposed. Checked over gRPC
// and the JSON gateway, for writes and for read-only txns (served as reads), by reading the keys
// back, and against real etcd 3.4.23 for the answers at the edge.
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import { MAX_TXN_NESTING_DEPTH } from '@ward/etcd/kv-store';
import { EtcdGrpcClient, nestedTxnBytes, startEtcdCluster, type EtcdCluster, type GrpcOutcome } from '@ward/testing/etcd-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login, setUpAuth, startWardCluster, type WardCluster } from '../support/ward-cluster';

const TOO_DEEP = { ok: false, code: 3, details: 'etcdserver: too many operations in txn request' };

let ward: WardCluster;
let etcd: EtcdCluster;
let wardClient: EtcdGrpcClient;
let etcdClient: EtcdGrpcClient;
let token: string;

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster(), startEtcdCluster({ members: 1 })]);
  await setUpAuth(ward.client(), { rootPassword: 'root-pw', user: 'dave', password: 'dave-pw', prefix: 'd/' });
  token = await login(ward.client(), 'dave', 'dave-pw');
  wardClient = new EtcdGrpcClient(ward.gateways[0]!.grpcAddress);
  etcdClient = new EtcdGrpcClient(etcd.clientEndpoint);
}, 180_000);

afterAll(async () => {
  wardClient?.close();
  etcdClient?.close();
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

interface KeyState {
  readonly revision: number;
  readonly value: string | undefined;
  readonly modRevision: number | undefined;
}

async function keyState(client: EtcdGrpcClient, key: string, credentials = { token }): Promise<KeyState> {
  const read = await client.call<{ header: { revision: string }; kvs: Array<{ value: Buffer; mod_revision: string }> }>('KV', 'Range', { key: Buffer.from(key) }, credentials);
  if (!read.ok) throw new Error(`range ${key}: ${read.code} ${read.details}`);
  const kv = read.response.kvs[0];
  return { revision: Number(read.response.header.revision), value: kv?.value.toString(), modRevision: kv === undefined ? undefined : Number(kv.mod_revision) };
}

interface TxnAnswer {
  header: { revision: string };
  succeeded: boolean;
  responses: unknown[];
}

/** `levels` TxnRequests, each the only success op of the one around it, the innermost holding `innermost`. */
function nestedJson(levels: number, innermost: Record<string, unknown>): Record<string, unknown> {
  let txn: Record<string, unknown> = { success: [innermost] };
  for (let level = 1; level < levels; level++) txn = { success: [{ request_txn: txn }] };
  return txn;
}

/** The response op at the bottom of `levels` nested TxnResponses. */
function innermostOp(answer: TxnAnswer, levels: number): Record<string, unknown> {
  let txn = answer as { responses: Array<Record<string, unknown>> };
  for (let level = 1; level < levels; level++) txn = txn.responses[0]!['response_txn'] as typeof txn;
  return txn.responses[0]!;
}

async function postJson(url: string, body: unknown, authorization?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers['authorization'] = authorization;
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A gRPC Txn of raw bytes: the decoded answer, or the error. */
function decoded(outcome: GrpcOutcome<Buffer>): GrpcOutcome<TxnAnswer> {
  return outcome.ok ? { ok: true, response: decodeEtcdMessage<TxnAnswer>('etcdserverpb.TxnResponse', outcome.response) } : outcome;
}

describe('hostile: nested txns get an answer that matches what was applied', () => {
  it('the bound is etcd 3.4.23’s: 128 levels accepted, 129 refused', () => {
    expect(MAX_TXN_NESTING_DEPTH).toBe(128);
  });

  // nestedTxnBytes(n) nests n request_txn hops around one put: n + 1 levels of TxnRequest.
  it.each([48, 49, 50, 100, MAX_TXN_NESTING_DEPTH - 1])('a put under %i request_txn hops (within the bound) is written and answered as written, over gRPC', async (hops) => {
    const key = `d/grpc-${hops}`;
    const before = await keyState(wardClient, key);
    const answer = decoded(await wardClient.rawUnary('KV', 'Txn', nestedTxnBytes(hops, key, `v${hops}`), { token, deadlineMs: 20_000 }));
    const after = await keyState(wardClient, key);
    expect(answer).toMatchObject({ ok: true, response: { succeeded: true } });
    const revision = Number((answer as { response: TxnAnswer }).response.header.revision);
    // The answer names the revision that wrote the key: exactly one write.
    expect(after).toEqual({ revision, value: `v${hops}`, modRevision: revision });
    expect(revision).toBe(before.revision + 1);
    expect(innermostOp((answer as { response: TxnAnswer }).response, hops + 1)).toHaveProperty('response_put');
  }, 60_000);

  it.each([MAX_TXN_NESTING_DEPTH, MAX_TXN_NESTING_DEPTH + 1, 1000, 100_000])(
    'a put under %i request_txn hops (past the bound) is refused with etcd’s error and nothing is written, over gRPC',
    async (hops) => {
      const key = `d/grpc-deep-${hops}`;
      const before = await keyState(wardClient, key);
      const answer = await wardClient.rawUnary('KV', 'Txn', nestedTxnBytes(hops, key, 'v'), { token, deadlineMs: 20_000 });
      expect(answer).toEqual(TOO_DEEP);
      expect(await keyState(wardClient, key)).toEqual({ revision: before.revision, value: undefined, modRevision: undefined });
    },
    60_000,
  );

  it('etcd 3.4.23 gives the same answers at the edge and far past it', async () => {
    const outcomes = async (client: EtcdGrpcClient, credentials: { token?: string }): Promise<unknown[]> => {
      const out: unknown[] = [];
      for (const hops of [MAX_TXN_NESTING_DEPTH - 1, MAX_TXN_NESTING_DEPTH, 1000]) {
        const answer = decoded(await client.rawUnary('KV', 'Txn', nestedTxnBytes(hops, `d/edge-${hops}`, 'v'), credentials));
        out.push(answer.ok ? { ok: true, succeeded: answer.response.succeeded } : answer);
      }
      return out;
    };
    const expected = [{ ok: true, succeeded: true }, TOO_DEEP, TOO_DEEP];
    expect(await outcomes(etcdClient, {})).toEqual(expected);
    expect(await outcomes(wardClient, { token })).toEqual(expected);
  }, 60_000);

  it('read-only nested txns (served as reads): answered at the bound, refused past it', async () => {
    await wardClient.call('KV', 'Put', { key: Buffer.from('d/ro'), value: Buffer.from('ro-value') }, { token });
    const readAt = (levels: number): Promise<GrpcOutcome<TxnAnswer>> =>
      wardClient.call<TxnAnswer>('KV', 'Txn', nestedJsonProto(levels), { token, deadlineMs: 20_000 });
    const within = await readAt(MAX_TXN_NESTING_DEPTH);
    expect(within.ok).toBe(true);
    const range = innermostOp((within as { response: TxnAnswer }).response, MAX_TXN_NESTING_DEPTH)['response_range'] as { kvs: Array<{ value: Buffer }> };
    expect(range.kvs.map((kv) => kv.value.toString())).toEqual(['ro-value']);
    expect(await readAt(MAX_TXN_NESTING_DEPTH + 1)).toEqual(TOO_DEEP);
  }, 60_000);

  it('over the JSON gateway: written and answered at the bound, refused (code 3, nothing written) past it', async () => {
    const url = `http://${ward.gateways[0]!.httpAddress}/v3/kv/txn`;
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const put = (key: string): Record<string, unknown> => ({ request_put: { key: b64(key), value: b64('json') } });

    const before = await keyState(wardClient, 'd/json-max');
    const within = await postJson(url, nestedJson(MAX_TXN_NESTING_DEPTH, put('d/json-max')), token);
    expect(within.status).toBe(200);
    expect(within.json).toMatchObject({ succeeded: true });
    const revision = Number((within.json['header'] as { revision: string }).revision);
    expect(revision).toBe(before.revision + 1);
    expect(await keyState(wardClient, 'd/json-max')).toEqual({ revision, value: 'json', modRevision: revision });

    const past = await postJson(url, nestedJson(MAX_TXN_NESTING_DEPTH + 1, put('d/json-past')), token);
    expect(past).toEqual({ status: 400, json: { error: TOO_DEEP.details, message: TOO_DEEP.details, code: 3 } });
    expect((await keyState(wardClient, 'd/json-past')).value).toBeUndefined();

    // Far past it the JSON decoder stops first, with the same answer; nothing written.
    const far = await postJson(url, nestedJson(1000, put('d/json-far')), token);
    expect(far).toEqual(past);
    expect((await keyState(wardClient, 'd/json-far')).value).toBeUndefined();

    // etcd's JSON gateway answers the edge the same way.
    const etcdUrl = `${etcd.jsonGatewayUrl}/v3/kv/txn`;
    expect((await postJson(etcdUrl, nestedJson(MAX_TXN_NESTING_DEPTH, put('d/json-max')))).json).toMatchObject({ succeeded: true });
    expect(await postJson(etcdUrl, nestedJson(MAX_TXN_NESTING_DEPTH + 1, put('d/json-past')))).toEqual(past);
    expect(await postJson(etcdUrl, nestedJson(1000, put('d/json-far')))).toEqual(past);
  }, 60_000);

  it('afterwards every member and the gateway still serve', async () => {
    for (const member of ward.cluster.members) expect(member.process?.running).toBe(true);
    expect(await wardClient.call('KV', 'Put', { key: Buffer.from('d/alive'), value: Buffer.from('1') }, { token })).toMatchObject({ ok: true });
  }, 30_000);
});

/** The read-only counterpart of nestedTxnBytes as a proto object: a range of d/ro under `levels` txns. */
function nestedJsonProto(levels: number): Record<string, unknown> {
  return nestedJson(levels, { request_range: { key: Buffer.from('d/ro') } });
}
