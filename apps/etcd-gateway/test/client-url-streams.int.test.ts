// The client URL's streams against real etcd 3.4.23, where a mid-stream failure and the snapshot
// need their own clusters: a watch whose cluster goes away mid-stream (grpc-gateway's stream error
// object, after the results, with no line break, then the end of the response), a stream refused
// before any answer (the same object under the code's HTTP status), and
// `POST /v3/maintenance/snapshot` with auth on (root streams the file as result lines; others are
// refused before any chunk).
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';
import { startWardCluster, type WardCluster } from './support/ward-cluster';

let ward: WardCluster;
let etcd: EtcdCluster;
const TARGETS = ['ward', 'etcd'] as const;
type TargetName = (typeof TARGETS)[number];
/** host:port of the client URL each is reached at. */
const ports: Record<TargetName, number> = { ward: 0, etcd: 0 };

const b64 = (text: string): string => Buffer.from(text).toString('base64');

async function postJson(target: TargetName, path: string, body: object, token?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${ports[target]}${path}`, { method: 'POST', body: JSON.stringify(body), headers: token === undefined ? {} : { authorization: token } });
  return (await response.json()) as Record<string, unknown>;
}

/**
 * A raw HTTP/1.1 streaming POST with a chunked body left open (as a client streams requests),
 * `Expect: 100-continue` as curl sends it (etcd's Go server holds a streamed answer back until
 * the body ends otherwise); the response body is decoded from its chunks.
 */
class RawStream {
  private readonly socket: Socket;
  private raw = Buffer.alloc(0);
  readonly closed: Promise<void>;

  constructor(port: number, path: string, firstRequest: string, headers: readonly string[] = []) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => (this.raw = Buffer.concat([this.raw, chunk])));
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
    const head = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Transfer-Encoding: chunked', 'Expect: 100-continue', ...headers].join('\r\n');
    this.socket.write(`${head}\r\n\r\n${Buffer.byteLength(firstRequest).toString(16)}\r\n${firstRequest}\r\n`);
  }

  /** The final response (after any 100 Continue): status, and its body so far, de-chunked; `ended` once the last chunk came. */
  response(): { status: number; body: string; ended: boolean } {
    let text = this.raw.toString('latin1');
    while (text.startsWith('HTTP/1.1 100')) text = text.slice(text.indexOf('\r\n\r\n') + 4);
    const split = text.indexOf('\r\n\r\n');
    if (split < 0) return { status: 0, body: '', ended: false };
    const status = Number(text.slice(9, 12));
    let rest = Buffer.from(text.slice(split + 4), 'latin1');
    const parts: Buffer[] = [];
    let ended = false;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) break;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        ended = true;
        break;
      }
      if (rest.length < lineEnd + 2 + size + 2) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    return { status, body: Buffer.concat(parts).toString('utf8'), ended };
  }

  lines(): string[] {
    return this.response().body.split('\n').filter((line) => line !== '');
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The shape of a stream error line: its keys in order and the values that must agree. */
function errorShape(line: string): unknown {
  const parsed = JSON.parse(line) as { error: Record<string, unknown> };
  const { grpc_code, http_code, http_status } = parsed.error;
  return { keys: Object.keys(parsed), errorKeys: Object.keys(parsed.error), grpc_code, http_code, http_status, messageType: typeof parsed.error['message'] };
}

beforeAll(async () => {
  [ward, etcd] = await Promise.all([startWardCluster({ size: 1 }), startEtcdCluster({ members: 3, bcryptCost: 4 })]);
  ports.ward = ward.gateways[0]!.grpcPort;
  ports.etcd = Number(new URL(etcd.members[0]!.clientUrl).port);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
});

describe('POST /v3/maintenance/snapshot with auth on', () => {
  beforeAll(async () => {
    for (const t of TARGETS) {
      for (let i = 0; i < 40; i++) await postJson(t, '/v3/kv/put', { key: b64(`snap/${i}`), value: Buffer.alloc(2000, i).toString('base64') });
      await postJson(t, '/v3/auth/user/add', { name: 'root', password: 'root-pw' });
      await postJson(t, '/v3/auth/user/grant', { user: 'root', role: 'root' });
      await postJson(t, '/v3/auth/user/add', { name: 'alice', password: 'alice-pw' });
      expect((await postJson(t, '/v3/auth/enable', {}))['error'], t).toBeUndefined();
    }
  }, 60_000);

  async function token(t: TargetName, name: string): Promise<string> {
    return ((await postJson(t, '/v3/auth/authenticate', { name, password: `${name}-pw` })) as { token: string }).token;
  }

  async function snapshot(t: TargetName, authorization?: string): Promise<{ status: number; contentType: string | null; body: string }> {
    const response = await fetch(`http://127.0.0.1:${ports[t]}/v3/maintenance/snapshot`, { method: 'POST', body: '{}', headers: authorization === undefined ? {} : { authorization } });
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  }

  it('root gets the file as {"result":{"remaining_bytes","blob"}} lines counting down, ending with its SHA-256, as from etcd', async () => {
    for (const t of TARGETS) {
      const answer = await snapshot(t, await token(t, 'root'));
      expect([answer.status, answer.contentType], t).toEqual([200, 'application/json']);
      const lines = answer.body.split('\n');
      expect(lines.pop(), t).toBe('');
      const results = lines.map((line) => (JSON.parse(line) as { result: { remaining_bytes?: string; blob: string; header?: unknown } }).result);
      expect(results.length, t).toBeGreaterThan(2);
      // Where ward differs: its messages carry a response header (as over gRPC); etcd 3.4.23's carry none.
      const known = t === 'ward' ? ['remaining_bytes', 'blob', 'header'] : ['remaining_bytes', 'blob'];
      for (const result of results) expect(Object.keys(result).filter((key) => !known.includes(key)), `${t} ${JSON.stringify(result).slice(0, 200)}`).toEqual([]);
      const blobs = results.map((result) => Buffer.from(result.blob, 'base64'));
      // What etcdctl writes: every blob in order, the last 32 bytes the SHA-256 of the rest.
      const file = Buffer.concat(blobs);
      expect(file.subarray(-32).equals(createHash('sha256').update(file.subarray(0, -32)).digest()), t).toBe(true);
      // remaining_bytes: what is left after each message, down to 0 (left out) on the last. etcd
      // sends the SHA-256 as a message of its own that it does not count; ward's file ends with it
      // (its chunks are the file), so ward counts it.
      let after = file.length;
      for (const [i, result] of results.entries()) {
        after -= blobs[i]!.length;
        const expected = i === results.length - 1 ? 0 : after - (t === 'etcd' ? 32 : 0);
        expect(Number(result.remaining_bytes ?? '0'), `${t} message ${i}`).toBe(expected);
      }
      expect(results.at(-1)!.remaining_bytes, t).toBeUndefined();
      expect(file.length, t).toBeGreaterThan(80_000);
    }
  });

  it('a non-root user and an anonymous caller are refused before any chunk, with the stream error object', async () => {
    const answers = await Promise.all(
      TARGETS.map(async (t) => ({ user: await snapshot(t, await token(t, 'alice')), anonymous: await snapshot(t) })),
    );
    for (const [i, t] of TARGETS.entries()) {
      for (const refused of [answers[i]!.user, answers[i]!.anonymous]) {
        expect(refused.body.endsWith('\n'), t).toBe(false);
        expect(errorShape(refused.body), t).toMatchObject({ keys: ['error'], errorKeys: ['grpc_code', 'http_code', 'message', 'http_status'] });
        expect((JSON.parse(refused.body) as { error: { http_code: number } }).error.http_code, t).toBe(refused.status);
      }
    }
    // Where ward differs on purpose: etcd 3.4.23 answers its auth store's raw error (code 2, HTTP 500,
    // `auth: permission denied`); ward answers the code and text its gRPC Snapshot gives (and etcd's other RPCs give).
    expect(JSON.parse(answers[1]!.user.body)).toEqual({ error: { grpc_code: 2, http_code: 500, message: 'auth: permission denied', http_status: 'Internal Server Error' } });
    expect(JSON.parse(answers[0]!.user.body)).toEqual({ error: { grpc_code: 7, http_code: 403, message: 'etcdserver: permission denied', http_status: 'Forbidden' } });
    expect(JSON.parse(answers[1]!.anonymous.body)).toEqual({ error: { grpc_code: 2, http_code: 500, message: 'auth: user name is empty', http_status: 'Internal Server Error' } });
    expect(JSON.parse(answers[0]!.anonymous.body)).toEqual({ error: { grpc_code: 3, http_code: 400, message: 'etcdserver: user name is empty', http_status: 'Bad Request' } });
  });
});

describe('a watch whose cluster goes away mid-stream', () => {
  const rootTokens: Record<TargetName, string> = { ward: '', etcd: '' };

  it('gets its results, then grpc-gateway\'s stream error object without a line break, then the end of the response, as from etcd', async () => {
    // etcd ends a stream that asked for a leader (`hasleader`, sent as gRPC metadata through the
    // gateway) once its member has lost the leader; ward's watch ends when its member goes away.
    // Auth is on by now (the snapshot tests): root watches and puts.
    for (const t of TARGETS) rootTokens[t] = ((await postJson(t, '/v3/auth/authenticate', { name: 'root', password: 'root-pw' })) as { token: string }).token;
    const watches = {
      ward: new RawStream(ports.ward, '/v3/watch', JSON.stringify({ create_request: { key: b64('mid') } }), [`Authorization: ${rootTokens.ward}`]),
      etcd: new RawStream(ports.etcd, '/v3/watch', JSON.stringify({ create_request: { key: b64('mid') } }), [`Authorization: ${rootTokens.etcd}`, 'Grpc-Metadata-hasleader: true']),
    };
    try {
      for (const t of TARGETS) await eventually(`${t} created`, () => (watches[t].lines().length === 1 ? true : undefined), 10_000);
      for (const t of TARGETS) expect(JSON.parse(watches[t].lines()[0]!), t).toMatchObject({ result: { created: true } });
      for (const t of TARGETS) await postJson(t, '/v3/kv/put', { key: b64('mid'), value: b64('v') }, rootTokens[t]);
      for (const t of TARGETS) await eventually(`${t} event`, () => (watches[t].lines().length === 2 ? true : undefined), 10_000);
      await Promise.all([ward.cluster.kill(ward.cluster.members[0]!.id), etcd.members[1]!.process.stop('SIGKILL'), etcd.members[2]!.process.stop('SIGKILL')]);
      const ends = await Promise.all(TARGETS.map((t) => eventually(`${t} stream error`, () => (watches[t].response().ended ? watches[t].response() : undefined), 30_000)));
      for (const [i, t] of TARGETS.entries()) {
        const { status, body } = ends[i]!;
        expect(status, t).toBe(200);
        expect(body.endsWith('}'), `${t}: no line break after the error`).toBe(true);
        const lines = body.split('\n');
        expect(lines, t).toHaveLength(3);
        expect(Object.keys(JSON.parse(lines[1]!) as object), t).toEqual(['result']);
        expect(errorShape(lines[2]!), t).toEqual({ keys: ['error'], errorKeys: ['grpc_code', 'http_code', 'message', 'http_status'], grpc_code: 14, http_code: 503, http_status: 'Service Unavailable', messageType: 'string' });
      }
      expect(JSON.parse(ends[1]!.body.split('\n')[2]!)).toMatchObject({ error: { message: 'etcdserver: no leader' } });
      await Promise.all(TARGETS.map((t) => watches[t].closed));
    } finally {
      for (const t of TARGETS) watches[t].close();
    }
  });

  it('a stream that fails before any answer: the same object under the code\'s HTTP status', async () => {
    const refused = {
      ward: new RawStream(ports.ward, '/v3/watch', JSON.stringify({ create_request: { key: b64('mid') } }), [`Authorization: ${rootTokens.ward}`]),
      etcd: new RawStream(ports.etcd, '/v3/watch', JSON.stringify({ create_request: { key: b64('mid') } }), [`Authorization: ${rootTokens.etcd}`, 'Grpc-Metadata-hasleader: true']),
    };
    try {
      const answers = await Promise.all(TARGETS.map((t) => eventually(`${t} refusal`, () => (refused[t].response().ended ? refused[t].response() : undefined), 30_000)));
      for (const [i, t] of TARGETS.entries()) {
        const { status, body } = answers[i]!;
        expect(body.endsWith('}'), t).toBe(true);
        expect(errorShape(body), t).toMatchObject({ keys: ['error'], errorKeys: ['grpc_code', 'http_code', 'message', 'http_status'], messageType: 'string' });
        expect((JSON.parse(body) as { error: { http_code: number } }).error.http_code, t).toBe(status);
      }
      expect([answers[1]!.status, JSON.parse(answers[1]!.body)]).toEqual([503, { error: { grpc_code: 14, http_code: 503, message: 'etcdserver: no leader', http_status: 'Service Unavailable' } }]);
      // ward's member is gone, so it has no leader either: the same answer, byte for byte.
      expect(answers[0]!).toEqual(answers[1]!);
      // No member has ever told this gateway its version: /version claims none (etcd would not
      // answer at all before its member serves), and /health is false.
      const version = await fetch(`http://127.0.0.1:${ports.ward}/version`);
      expect([version.status, version.headers.get('content-type'), await version.text()]).toEqual([503, 'application/json', '{"etcdserver":"not_decided","etcdcluster":"not_decided"}']);
      const health = await fetch(`http://127.0.0.1:${ports.ward}/health`);
      expect([health.status, await health.text()]).toEqual([503, '{"health":"false"}']);
    } finally {
      for (const t of TARGETS) refused[t].close();
    }
  });
});
