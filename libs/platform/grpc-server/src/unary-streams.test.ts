// The direct unary path against grpc-js's own, over real HTTP/2 on loopback: the same raw requests
// (well-formed, malformed, oversized, late, unknown) go to a server of each kind, and the answers
// (status line, headers, body bytes, trailers) must be the same.
import { connect, constants, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@ward/platform/logging';
import { GrpcStatusError, createGrpcServer, type GrpcServer, type ServiceHandlers } from './index';

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const definition: ServiceDefinition = {
  Echo: { path: '/test.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: json.serialize, requestDeserialize: json.deserialize, responseSerialize: json.serialize, responseDeserialize: json.deserialize },
};
type Request = { text?: string; fail?: 'wire' | 'raw' | 'status' | 'unicode'; delayMs?: number; big?: number };
const handlers: ServiceHandlers = {
  async Echo(request: Request) {
    if (request.delayMs) await new Promise((resolve) => setTimeout(resolve, request.delayMs));
    if (request.fail === 'wire') throw Object.assign(new Error('etcdserver: permission denied'), { grpcCode: 7 });
    if (request.fail === 'status') throw new GrpcStatusError(status.NOT_FOUND, 'no such thing');
    if (request.fail === 'unicode') throw new GrpcStatusError(status.INVALID_ARGUMENT, 'key "ü 100%" is bad');
    if (request.fail === 'raw') throw new Error('connect ECONNREFUSED /var/lib/secret.sock');
    return { text: request.big ? 'x'.repeat(request.big) : request.text };
  },
};

interface Answer {
  readonly headers: Record<string, unknown>;
  readonly body: string;
  readonly trailers: Record<string, unknown>;
}

function frame(payload: Buffer, declared = payload.length, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(declared, 1);
  return Buffer.concat([head, payload]);
}
const message = (request: unknown): Buffer => frame(json.serialize(request));

/** Sends one raw request and collects the whole answer (the `date` header left out). */
function send(session: ClientHttp2Session, body: Buffer, extra: OutgoingHttpHeaders = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/test.Echo/Echo', 'content-type': 'application/grpc', te: 'trailers', ...extra });
    let headers: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = { ...h }));
    stream.on('trailers', (t) => (trailers = { ...t }));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      delete headers['date'];
      resolve({ headers, body: Buffer.concat(chunks).toString('hex'), trailers });
    });
    stream.end(body);
  });
}

const servers: GrpcServer[] = [];
const sessions: ClientHttp2Session[] = [];

async function serve(serveUnaryDirectly: boolean): Promise<{ server: GrpcServer; session: ClientHttp2Session }> {
  const server = createGrpcServer({
    host: '127.0.0.1',
    port: 0,
    maxReceiveMessageBytes: 1024,
    maxSendMessageBytes: 2048,
    keepaliveTimeMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    maxConcurrentStreams: 100,
    logger: createLogger({ name: 'test', level: 'silent' }),
    serveUnaryDirectly,
  });
  server.addService(definition, handlers);
  const port = await server.start();
  const session = connect(`http://127.0.0.1:${port}`);
  // A stopped server's connection ends with an error on the session; the calls report their own.
  session.on('error', () => undefined);
  servers.push(server);
  sessions.push(session);
  return { server, session };
}

describe('unary calls served directly off their streams', () => {
  let direct: { server: GrpcServer; session: ClientHttp2Session };
  let grpcJs: { server: GrpcServer; session: ClientHttp2Session };
  beforeAll(async () => {
    direct = await serve(true);
    grpcJs = await serve(false);
  });
  afterAll(async () => {
    for (const session of sessions) session.close();
    await Promise.all(servers.map((server) => server.stop(100)));
  });

  const cases: [string, () => Buffer, OutgoingHttpHeaders?][] = [
    ['an answer', () => message({ text: 'hi' })],
    ['an empty request message', () => frame(Buffer.alloc(0))],
    ['an error that carries its status', () => message({ fail: 'wire' })],
    ['a GrpcStatusError', () => message({ fail: 'status' })],
    ['details that need percent-encoding', () => message({ fail: 'unicode' })],
    ['an unmapped error (fixed text)', () => message({ fail: 'raw' })],
    ['no request message', () => Buffer.alloc(0)],
    ['two request messages', () => Buffer.concat([message({ text: 'a' }), message({ text: 'b' })])],
    ['a frame shorter than its declared length', () => frame(Buffer.from('{}'), 100)],
    ['a partial frame header', () => Buffer.from([0, 0])],
    ['a whole message and part of a second', () => Buffer.concat([message({ text: 'a' }), Buffer.from([0, 0, 0])])],
    ['a whole message and a partial second one', () => Buffer.concat([message({ text: 'a' }), frame(Buffer.from('{}'), 50)])],
    ['a whole message, then a second declared above the limit', () => Buffer.concat([message({ text: 'a' }), frame(Buffer.from('{}'), 1 << 30)])],
    ['a request that does not decode', () => frame(Buffer.from('{nope'))],
    ['a request above the receive limit', () => message({ text: 'x'.repeat(4096) })],
    ['a declared length above the limit, with few bytes', () => frame(Buffer.from('{}'), 1 << 30)],
    ['an answer above the send limit', () => message({ big: 4096 })],
    ['a compressed flag under identity encoding', () => frame(json.serialize({ text: 'f' }), undefined, 1)],
    ['an invalid grpc-timeout', () => message({ text: 'late' }), { 'grpc-timeout': 'soon' }],
    ['a deadline that passes', () => message({ delayMs: 300 }), { 'grpc-timeout': '50m' }],
    ['a deadline that does not', () => message({ text: 'in time' }), { 'grpc-timeout': '5S' }],
    ['a content type that is not gRPC', () => message({ text: 'x' }), { 'content-type': 'text/plain' }],
    ['a gzip-encoded request (grpc-js decompresses)', () => message({ text: 'x' }), { 'grpc-encoding': 'gzip' }],
    ['an unknown method', () => message({ text: 'x' }), { ':path': '/test.Echo/Nope' }],
  ];

  it.each(cases)('%s: the same answer as grpc-js', async (_name, body, headers) => {
    const [ours, theirs] = await Promise.all([send(direct.session, body(), headers), send(grpcJs.session, body(), headers)]);
    expect(ours).toEqual(theirs);
    expect(Object.keys(theirs.headers).length).toBeGreaterThan(0);
  });

  it('took the direct path for the plain calls and left the rest to grpc-js', () => {
    const counts = direct.server.callCounts();
    // gzip, text/plain and the unknown method went to grpc-js; every other case was served directly.
    expect(counts).toEqual({ direct: cases.length - 3, grpcJs: 3 });
    expect(grpcJs.server.callCounts()).toEqual({ direct: 0, grpcJs: cases.length });
  });

  it('a client that never half-closes: a second whole message, or an oversized one, ends the call at once (nothing more is buffered)', async () => {
    const open = (session: ClientHttp2Session, bytes: Buffer): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': '/test.Echo/Echo', 'content-type': 'application/grpc', te: 'trailers' });
        stream.on('response', (headers) => {
          resolve({ ...headers });
          stream.close();
        });
        stream.on('error', reject);
        stream.write(bytes);
      });
    for (const bytes of [Buffer.concat([message({ text: 'a' }), message({ text: 'b' })]), Buffer.concat([message({ text: 'a' }), frame(Buffer.alloc(64), 1 << 30)])]) {
      const [ours, theirs] = await Promise.all([open(direct.session, bytes), open(grpcJs.session, bytes)]);
      delete ours['date'];
      delete theirs['date'];
      expect(ours).toEqual(theirs);
      expect(ours['grpc-status']).toMatch(/^(8|12)$/);
    }
  });

  it('a stopping server leaves new calls to grpc-js (which refuses them)', async () => {
    const { server, session } = await serve(true);
    const before = server.callCounts();
    const stopped = server.stop(200);
    const answer = await send(session, message({ text: 'late' })).catch((error: Error) => ({ error: error.message }));
    await stopped;
    expect(server.callCounts().direct).toBe(before.direct);
    expect(JSON.stringify(answer)).not.toContain(Buffer.from('late').toString('hex'));
  });

  it('sends the gRPC status codes of the protocol', async () => {
    const ok = await send(direct.session, message({ text: 'hi' }));
    expect(ok.headers[constants.HTTP2_HEADER_STATUS]).toBe(200);
    expect(ok.trailers['grpc-status']).toBe('0');
    const late = await send(direct.session, message({ delayMs: 300 }), { 'grpc-timeout': '20m' });
    expect(late.headers['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
    const big = await send(direct.session, message({ text: 'x'.repeat(4096) }));
    expect(big.headers['grpc-status']).toBe(String(status.RESOURCE_EXHAUSTED));
  });
});
