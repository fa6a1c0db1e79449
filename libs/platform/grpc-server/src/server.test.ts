// Real gRPC over loopback: a JSON-coded test service, a grpc-js client, and the wrapped handlers.
import { connect as http2Connect, type OutgoingHttpHeaders } from 'node:http2';
import { Writable } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentials, makeGenericClientConstructor, status, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { GrpcStatusError, createGrpcServer, type CallContext, type GrpcServer, type ServiceHandlers } from './index';

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/test.Echo/${name}`,
  requestStream,
  responseStream,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
const definition: ServiceDefinition = {
  Echo: method('Echo', false, false),
  Count: method('Count', false, true),
  Chat: method('Chat', true, true),
  Sum: method('Sum', true, false),
};

type Request = { text?: string; fail?: 'wire' | 'raw' | 'sync' | 'status'; delayMs?: number; n?: number; keepSignal?: boolean; keepCancellation?: boolean; metadataKeys?: string[]; peer?: boolean };

/** A metadata value as JSON can carry it (binary values as base64, marked). */
const shown = (value: unknown): unknown => (Buffer.isBuffer(value) ? { base64: value.toString('base64') } : value ?? null);

/** The signals of calls that asked for them (`keepSignal`), in arrival order. */
const signals: AbortSignal[] = [];

/** The cancellations of calls that asked for them (`keepCancellation`), with what their listeners saw. */
interface KeptCancellation {
  readonly context: CallContext;
  /** Runs of a listener added when the handler started. */
  runs: number;
  /** Runs of a listener added and removed at once. */
  removedRuns: number;
}
const cancellations: KeptCancellation[] = [];

const handlers: ServiceHandlers = {
  async Echo(request: Request, context: CallContext) {
    if (request.keepSignal) signals.push(context.signal);
    if (request.keepCancellation) {
      const kept: KeptCancellation = { context, runs: 0, removedRuns: 0 };
      cancellations.push(kept);
      context.cancellation.addEventListener('abort', () => kept.runs++, { once: true });
      const removed = (): void => void kept.removedRuns++;
      context.cancellation.addEventListener('abort', removed);
      context.cancellation.removeEventListener('abort', removed);
    }
    if (request.metadataKeys) {
      // metadataValue first: asking for `metadata` builds it, and later lookups read that.
      const direct = request.metadataKeys.map((key) => shown(context.metadataValue(key)));
      return { direct, viaMetadata: request.metadataKeys.map((key) => shown(context.metadata.get(key)[0])) };
    }
    if (request.peer) return { peer: context.peer };
    if (request.delayMs) await new Promise((resolve) => setTimeout(resolve, request.delayMs));
    if (request.fail === 'wire') throw Object.assign(new Error('etcdserver: permission denied'), { grpcCode: 7 });
    if (request.fail === 'status') throw new GrpcStatusError(status.NOT_FOUND, 'no such thing');
    if (request.fail === 'raw') throw new Error('connect ECONNREFUSED /var/lib/secret/db.sock password=hunter2');
    return { text: request.text };
  },
  Count: ((request: Request, call: { write(v: unknown): void }) => {
    for (let i = 0; i < (request.n ?? 0); i++) call.write({ i });
    if (request.fail === 'raw') throw new Error('stream exploded at /internal/path');
    return Promise.resolve();
  }) as ServiceHandlers[string],
  Chat: ((call: NodeJS.ReadableStream & { write(v: unknown): void }) =>
    new Promise<void>((resolve) => {
      call.on('data', (message: Request) => call.write({ text: `re: ${message.text}` }));
      call.on('end', () => resolve());
    })) as ServiceHandlers[string],
  Sum: ((call: NodeJS.ReadableStream) =>
    new Promise((resolve) => {
      let total = 0;
      call.on('data', (message: Request) => (total += message.n ?? 0));
      call.on('end', () => resolve({ n: total }));
    })) as ServiceHandlers[string],
};

const EchoClient = makeGenericClientConstructor(definition, "Echo");
type Any = Record<string, (...args: unknown[]) => unknown>;
let server: GrpcServer | undefined;
let client: (Client & Any) | undefined;
let logLines: string[] = [];

/** Whether the suite below runs with unary calls served directly off their streams, or by grpc-js. */
let serveUnaryDirectly = true;

async function start(overrides: { maxReceiveMessageBytes?: number } = {}): Promise<Client & Any> {
  logLines = [];
  const destination = new Writable({ write: (chunk, _e, cb) => (logLines.push(String(chunk)), cb()) });
  server = createGrpcServer({
    host: '127.0.0.1',
    port: 0,
    maxReceiveMessageBytes: overrides.maxReceiveMessageBytes ?? 1024 * 1024,
    maxSendMessageBytes: 1024 * 1024,
    keepaliveTimeMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    maxConcurrentStreams: 100,
    logger: createLogger({ name: 'test', level: 'info', destination }),
    metrics: createMetrics({ prefix: 'test_', collectProcessMetrics: false }),
    serveUnaryDirectly,
  });
  server.addService(definition, handlers);
  const port = await server.start();
  client = new EchoClient(`127.0.0.1:${port}`, credentials.createInsecure()) as Client & Any;
  return client;
}

afterEach(async () => {
  client?.close();
  await server?.stop(100);
  server = undefined;
  client = undefined;
});

function unary(c: Any, name: string, request: Request): Promise<{ value?: unknown; error?: { code: number; details: string } }> {
  return new Promise((resolve) => {
    c[name]!(request, (error: { code: number; details: string } | null, value: unknown) => resolve(error ? { error } : { value }));
  });
}

/** Polls `condition` once per event-loop turn until it holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** One Echo call on a raw HTTP/2 connection, with exactly these extra headers; its JSON answer. */
async function rawEcho(port: number, headers: OutgoingHttpHeaders, request: Request): Promise<unknown> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  try {
    const stream = session.request({ ':method': 'POST', ':path': '/test.Echo/Echo', 'content-type': 'application/grpc', te: 'trailers', ...headers });
    const body = Buffer.from(JSON.stringify(request));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    stream.end(frame);
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve, reject) => stream.on('end', resolve).on('error', reject));
    return JSON.parse(Buffer.concat(chunks).subarray(5).toString()) as unknown;
  } finally {
    session.close();
  }
}

/** A server with one Echo call completed and one left running, both with `flag`; once `kept` saw both. */
async function completedAndPending(flag: 'keepSignal' | 'keepCancellation', kept: () => number): Promise<{ c: Client & Any; pending: { cancel(): void } }> {
  const c = await start();
  expect(await unary(c, 'Echo', { text: 'done', [flag]: true })).toEqual({ value: { text: 'done' } });
  const pending = c['Echo']!({ delayMs: 10_000, [flag]: true }, () => undefined) as { cancel(): void };
  await until(() => kept() === 2);
  return { c, pending };
}

describe.each([true, false])('createGrpcServer (unary calls served directly: %s)', (direct) => {
  beforeAll(() => {
    serveUnaryDirectly = direct;
  });

  it('serves unary calls over real gRPC, on the path chosen', async () => {
    const c = await start();
    expect(await unary(c, 'Echo', { text: 'hi' })).toEqual({ value: { text: 'hi' } });
    expect(server!.callCounts()).toEqual(direct ? { direct: 1, grpcJs: 0 } : { direct: 0, grpcJs: 1 });
  });

  it("reports the peer as the connection's address and port, the same for every call on it", async () => {
    const c = await start();
    const first = (await unary(c, 'Echo', { peer: true })).value as { peer: string };
    expect(first.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await unary(c, 'Echo', { peer: true })).value).toEqual(first);
    // Another connection: another client port.
    const serverPort = Number(c.getChannel().getTarget().split(':').pop());
    const other = (await rawEcho(serverPort, {}, { peer: true })) as { peer: string };
    expect(other.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(other.peer).not.toBe(first.peer);
  });

  it('aborts the signal when the client cancels, and not when the call completed', async () => {
    signals.length = 0;
    const { c, pending } = await completedAndPending('keepSignal', () => signals.length);
    pending.cancel();
    await until(() => signals[1]!.aborted);
    // Every stream has closed once the server stopped: the completed call's close is no cancellation.
    c.close();
    await server!.stop(100);
    expect(signals[0]!.aborted).toBe(false);
    expect(signals[1]!.aborted).toBe(true);
  });

  it('runs cancellation listeners once when the client cancels, never for a completed call, and makes a signal that agrees', async () => {
    cancellations.length = 0;
    const { c, pending } = await completedAndPending('keepCancellation', () => cancellations.length);
    const [done, cancelled] = cancellations as [KeptCancellation, KeptCancellation];
    expect(cancelled.context.cancellation.aborted).toBe(false);
    expect(() => cancelled.context.cancellation.throwIfAborted()).not.toThrow();
    pending.cancel();
    await until(() => cancelled.context.cancellation.aborted);
    expect(cancelled.runs).toBe(1);
    expect(cancelled.removedRuns).toBe(0);
    expect(cancelled.context.signal.aborted).toBe(true);
    expect(() => cancelled.context.cancellation.throwIfAborted()).toThrow(expect.objectContaining({ name: 'AbortError' }));
    // As on an aborted AbortSignal, a listener added now never runs.
    let late = 0;
    cancelled.context.cancellation.addEventListener('abort', () => late++);
    // Every stream has closed once the server stopped: the completed call's close is no cancellation.
    c.close();
    await server!.stop(100);
    expect(late).toBe(0);
    expect(cancelled.runs).toBe(1);
    expect(done.runs).toBe(0);
    expect(done.context.cancellation.aborted).toBe(false);
    expect(done.context.signal.aborted).toBe(false);
    expect(() => done.context.cancellation.throwIfAborted()).not.toThrow();
  });

  it('metadataValue gives what metadata.get(key)[0] gives, for every kind of header', async () => {
    await start();
    const port = Number(client!.getChannel().getTarget().split(':').pop());
    const headers: OutgoingHttpHeaders = {
      token: 'tok.1',
      authorization: 'Bearer abc',
      'x-twice': ['first', 'second'],
      'x-bad-first': ['tab\there', 'fine'],
      'x-latin1': 'caf\u00e9',
      'x-empty': '',
      'trace-bin': Buffer.from([0, 1, 2, 255]).toString('base64'),
      'grpc-timeout': '5S',
    };
    const keys = ['token', 'authorization', 'x-twice', 'x-bad-first', 'x-latin1', 'x-empty', 'trace-bin', 'grpc-timeout', 'te', 'content-type', 'user-agent', ':path', 'Token', 'absent'];
    const answer = (await rawEcho(port, headers, { metadataKeys: keys })) as { direct: unknown[]; viaMetadata: unknown[] };
    expect(answer.direct).toEqual(answer.viaMetadata);
    // And what that is: the first value (Node joins a repeated header into one); nothing for a
    // value metadata may not hold, for the transport's own headers, or for pseudo-headers; binary
    // values decoded.
    expect(Object.fromEntries(keys.map((key, i) => [key, answer.direct[i]]))).toEqual({
      token: 'tok.1',
      authorization: 'Bearer abc',
      'x-twice': 'first, second',
      'x-bad-first': null,
      'x-latin1': null,
      'x-empty': '',
      'trace-bin': { base64: Buffer.from([0, 1, 2, 255]).toString('base64') },
      'grpc-timeout': null,
      te: null,
      'content-type': null,
      'user-agent': null,
      ':path': null,
      Token: 'tok.1',
      absent: null,
    });
  });

  it('passes errors that carry a status through with their exact text', async () => {
    const c = await start();
    const wire = await unary(c, 'Echo', { fail: 'wire' });
    expect(wire.error).toMatchObject({ code: status.PERMISSION_DENIED, details: 'etcdserver: permission denied' });
    const explicit = await unary(c, 'Echo', { fail: 'status' });
    expect(explicit.error).toMatchObject({ code: status.NOT_FOUND, details: 'no such thing' });
  });

  it('never sends a raw error to the client: INTERNAL with a fixed text, internals only in the (scrubbed) log', async () => {
    const c = await start();
    const { error } = await unary(c, 'Echo', { fail: 'raw' });
    expect(error?.code).toBe(status.INTERNAL);
    expect(error?.details).toBe('internal error');
    expect(JSON.stringify(error)).not.toContain('ECONNREFUSED');
    const log = logLines.join('');
    expect(log).toContain('unmapped error answered as internal');
    expect(log).toContain('ECONNREFUSED');
  });

  it('a flood of one unmapped failure writes a few error lines, not one per call', async () => {
    const c = await start();
    const before = logLines.join('').split('unmapped error answered as internal').length;
    for (let i = 0; i < 40; i++) expect((await unary(c, 'Echo', { fail: 'raw' })).error?.code).toBe(status.INTERNAL);
    const lines = logLines.join('').split('unmapped error answered as internal').length - before;
    expect(lines).toBeGreaterThan(0);
    expect(lines).toBeLessThanOrEqual(5);
    expect(logLines.join('')).toContain('"method":"/test.Echo/Echo"');
  });

  it('maps a failure in a server stream after some messages', async () => {
    const c = await start();
    const received: unknown[] = [];
    const error = await new Promise<{ code: number; details: string }>((resolve) => {
      const stream = c.Count!({ n: 3, fail: 'raw' }) as NodeJS.EventEmitter;
      stream.on('data', (message: unknown) => received.push(message));
      stream.on('error', resolve);
    });
    expect(received).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(error).toMatchObject({ code: status.INTERNAL, details: 'internal error' });
  });

  it('serves bidirectional and client streams', async () => {
    const c = await start();
    const replies = await new Promise<unknown[]>((resolve) => {
      const out: unknown[] = [];
      const stream = c.Chat!() as NodeJS.EventEmitter & { write(v: unknown): void; end(): void };
      stream.on('data', (m: unknown) => out.push(m));
      stream.on('end', () => resolve(out));
      stream.write({ text: 'a' });
      stream.write({ text: 'b' });
      stream.end();
    });
    expect(replies).toEqual([{ text: 're: a' }, { text: 're: b' }]);
    const sum = await new Promise<unknown>((resolve) => {
      const stream = c.Sum!((_e: unknown, v: unknown) => resolve(v)) as { write(v: unknown): void; end(): void };
      stream.write({ n: 2 });
      stream.write({ n: 40 });
      stream.end();
    });
    expect(sum).toEqual({ n: 42 });
  });

  it('rejects requests above the receive limit with RESOURCE_EXHAUSTED before the handler runs', async () => {
    const c = await start({ maxReceiveMessageBytes: 1024 });
    const { error } = await unary(c, 'Echo', { text: 'x'.repeat(4096) });
    expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await unary(c, 'Echo', { text: 'small' })).toEqual({ value: { text: 'small' } });
  });

  it('drains: a running call finishes, new calls are refused, streams are cut after the grace time', async () => {
    const c = await start();
    signals.length = 0;
    const slow = unary(c, 'Echo', { text: 'slow', delayMs: 300, keepSignal: true });
    const chat = c.Chat!() as NodeJS.EventEmitter;
    const chatEnded = new Promise((resolve) => chat.on('error', resolve).on('end', resolve));
    // The slow call is running in its handler (on a loaded machine the connection takes a while).
    while (signals.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const stopped = server!.stop(1000);
    const refused = await unary(c, 'Echo', { text: 'late' });
    expect(refused.error?.code).toBe(status.UNAVAILABLE);
    expect(await slow).toEqual({ value: { text: 'slow' } });
    const stopStarted = performance.now();
    await stopped;
    await chatEnded;
    // The grace (1 s) bounds the stop, and cuts a stream that never ends by itself.
    expect(performance.now() - stopStarted).toBeLessThan(5000);
    server = undefined;
  });

  it('validates its options', () => {
    const logger = createLogger({ name: 't', level: 'silent' });
    const base = { host: '127.0.0.1', port: 0, maxReceiveMessageBytes: 1, maxSendMessageBytes: 1, keepaliveTimeMs: 1, keepaliveTimeoutMs: 1, maxConcurrentStreams: 1, logger };
    expect(() => createGrpcServer({ ...base, maxReceiveMessageBytes: 0 })).toThrow(/maxReceiveMessageBytes/);
    expect(() => createGrpcServer({ ...base, port: 70000 })).toThrow(/port/);
    const s = createGrpcServer(base);
    expect(() => s.addService(definition, { Echo: handlers.Echo! })).toThrow(/no handler/);
  });
});
