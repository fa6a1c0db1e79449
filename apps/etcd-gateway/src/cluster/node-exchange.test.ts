// NodeExchange over both transports, real gRPC and the framed stream on a real socket, against a
// scripted Exchange server: calls of one turn share a message, answers find their callers in any
// order, and every way a call can end without an answer ends it with the code the unary call
// would have had.
import { createServer, type Socket } from 'node:net';
import { credentials, Server, ServerCredentials, status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { EXCHANGE_FRAMES, exchangeCodecs } from '@ward/etcd/node-calls';
import { wardNodeGrpc, wardNodeServiceDefinition } from '@ward/etcd/proto';
import { FramedStream } from '@ward/platform/grpc-server';
import { isWireError } from '@ward/etcd/wire-errors';
import { framedExchange } from './exchange-frames';
import { NodeConnection } from './node-connection';
import { NodeExchange, isNotServed, type ExchangeStream as ClientStream } from './node-exchange';

interface Call {
  id: string;
  call: 'propose' | 'read';
  propose?: { entry: Buffer };
  read?: { entry: Buffer };
}
/** The server's side of one stream, whichever the transport. */
interface ExchangeStream {
  write(message: { answers: object[] }): unknown;
  end(): void;
}

type Transport = 'grpc' | 'frames';

interface Scripted {
  /** host:port of the server. */
  readonly address: string;
  readonly messages: Call[][];
  readonly streams: ExchangeStream[];
  /** Opens a stream to the server, as NodeConnection does. */
  readonly open: () => ClientStream;
  /** Breaks a stream as a failing member would: not the OK end. */
  readonly breakStream: (stream: ExchangeStream) => void;
  stop(): void;
}

const open: Scripted[] = [];
afterEach(() => {
  for (const server of open.splice(0)) server.stop();
});

/** A server whose Exchange records every message and lets `onCalls` answer (or not). */
function scripted(transport: Transport, onCalls: (stream: ExchangeStream, calls: Call[]) => void): Promise<Scripted> {
  return transport === 'grpc' ? scriptedGrpc(onCalls) : scriptedFrames(onCalls);
}

/** A member's side of one framed Exchange connection (its calls' and answers' framing, its greeting). */
function memberStream(socket: Socket): FramedStream<{ answers: object[] }, { calls: Call[] }> {
  const codecs = exchangeCodecs();
  const framing = { serialize: codecs.serializeAnswers as never, deserialize: codecs.deserializeCalls as never, maxReceiveBytes: 1024 * 1024, aliveIntervalMs: 5_000, silenceLimitMs: 15_000 };
  return new FramedStream(socket, { ...framing, pauseReadsWhileBlocked: true, greet: true }, EXCHANGE_FRAMES.preface);
}

async function scriptedFrames(onCalls: (stream: ExchangeStream, calls: Call[]) => void): Promise<Scripted> {
  const messages: Call[][] = [];
  const streams: ExchangeStream[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const stream = memberStream(socket);
    streams.push(stream);
    stream.on('data', (message: { calls: Call[] }) => {
      messages.push(message.calls);
      onCalls(stream, message.calls);
    });
    stream.on('error', () => undefined);
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const result: Scripted = {
    address: `127.0.0.1:${port}`,
    messages,
    streams,
    open: framedExchange(`127.0.0.1:${port}`, { tls: null, maxReceiveBytes: 1024 * 1024, connectTimeoutMs: 5_000 }),
    breakStream: (stream) => (stream as FramedStream<object, object>).cancel(),
    stop: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
  open.push(result);
  return result;
}

async function scriptedGrpc(onCalls: (stream: ExchangeStream, calls: Call[]) => void): Promise<Scripted> {
  const messages: Call[][] = [];
  const streams: ExchangeStream[] = [];
  const server = new Server();
  const unimplemented = (_call: unknown, callback: (error: object) => void): void => callback({ code: Status.UNIMPLEMENTED });
  const handlers: Record<string, unknown> = {};
  for (const name of Object.keys(wardNodeServiceDefinition())) handlers[name] = unimplemented;
  handlers['Exchange'] = (stream: ServerDuplexStream<{ calls: Call[] }, { answers: object[] }>) => {
    streams.push(stream);
    stream.on('data', (message: { calls: Call[] }) => {
      messages.push(message.calls);
      onCalls(stream, message.calls);
    });
    stream.on('error', () => undefined);
  };
  server.addService(wardNodeServiceDefinition(), handlers as never);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  const Node = wardNodeGrpc().Node;
  const client = new Node(`127.0.0.1:${port}`, credentials.createInsecure());
  const result: Scripted = {
    address: `127.0.0.1:${port}`,
    messages,
    streams,
    open: () => client.Exchange() as unknown as ClientStream,
    breakStream: (stream) => (stream as ServerDuplexStream<object, object>).emit('error', { code: Status.UNAVAILABLE, details: 'member went away' }),
    stop: () => {
      client.close();
      server.forceShutdown();
    },
  };
  open.push(result);
  return result;
}

function exchangeOf(server: Scripted): NodeExchange {
  return new NodeExchange(server.open, { maxSendBytes: 4 * 1024 * 1024, nowMs: Date.now });
}

const propose = (text: string) => ({ propose: { entry: Buffer.from(text), timeout_ms: 1000 } });
const answerOf = (call: Call) => ({ id: call.id, answer: { response: Buffer.from(`answer to ${(call.propose ?? call.read)!.entry.toString()}`) } });

function codeOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'answered',
    (error: { code?: unknown }) => error.code,
  );
}

describe.each<Transport>(['grpc', 'frames'])('NodeExchange on %s', (transport) => {
  it('sends the calls of one event-loop turn in one message and matches answers given in reverse order', async () => {
    const server = await scripted(transport, (stream, calls) => stream.write({ answers: [...calls].reverse().map(answerOf) }));
    const exchange = exchangeOf(server);
    const deadline = Date.now() + 5000;
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((text) => exchange.call(propose(text), deadline)));
    expect(answers.map((answer) => answer.response?.toString())).toEqual(['answer to a', 'answer to b', 'answer to c', 'answer to d']);
    expect(server.messages).toHaveLength(1);
    expect(server.messages[0]).toHaveLength(4);
    // Later turns reuse the same stream.
    await exchange.call({ read: { entry: Buffer.from('e'), serializable: true, timeout_ms: 1000 } }, deadline);
    expect(server.streams).toHaveLength(1);
    expect(server.messages).toHaveLength(2);
    exchange.close();
  });

  it('a status answer rejects its call with that code and details; the others are unaffected', async () => {
    const server = await scripted(transport, (stream, calls) =>
      stream.write({ answers: calls.map((call) => (call.propose?.entry.toString() === 'bad' ? { id: call.id, status: { code: Status.INVALID_ARGUMENT, message: 'bad entry' } } : answerOf(call))) }),
    );
    const exchange = exchangeOf(server);
    const deadline = Date.now() + 5000;
    const [bad, good] = await Promise.allSettled([exchange.call(propose('bad'), deadline), exchange.call(propose('good'), deadline)]);
    expect(bad.status === 'rejected' && (bad.reason as { code: number; details: string })).toMatchObject({ code: Status.INVALID_ARGUMENT, details: 'bad entry' });
    expect(good.status === 'fulfilled' && good.value.response?.toString()).toBe('answer to good');
    exchange.close();
  });

  it('a stream that breaks fails its pending calls as UNAVAILABLE (outcome unknown), and the next call opens a new stream', async () => {
    let breakNext = true;
    const server = await scripted(transport, (stream, calls) => {
      if (breakNext) {
        breakNext = false;
        server.breakStream(stream);
        return;
      }
      stream.write({ answers: calls.map(answerOf) });
    });
    const exchange = exchangeOf(server);
    const deadline = Date.now() + 5000;
    const lost = exchange.call(propose('lost'), deadline);
    expect(await codeOf(lost)).toBe(Status.UNAVAILABLE);
    expect(await lost.catch(isNotServed)).toBe(false);
    expect((await exchange.call(propose('next'), deadline)).response?.toString()).toBe('answer to next');
    expect(server.streams).toHaveLength(2);
    exchange.close();
  });

  it('a stream the member ends with status OK (it stops) fails its unanswered calls as UNAVAILABLE marked not served; answered ones keep their answers', async () => {
    let first = true;
    const server = await scripted(transport, (stream, calls) => {
      if (!first) {
        stream.write({ answers: calls.map(answerOf) });
        return;
      }
      first = false;
      // Answers the first call, then ends the stream without serving the second.
      stream.write({ answers: [answerOf(calls[0]!)] });
      stream.end();
    });
    const exchange = exchangeOf(server);
    const deadline = Date.now() + 5000;
    const [answered, unserved] = await Promise.allSettled([exchange.call(propose('a'), deadline), exchange.call(propose('b'), deadline)]);
    expect(answered.status === 'fulfilled' && answered.value.response?.toString()).toBe('answer to a');
    expect(unserved.status).toBe('rejected');
    const reason = (unserved as PromiseRejectedResult).reason as { code: number };
    expect(reason.code).toBe(Status.UNAVAILABLE);
    expect(isNotServed(reason)).toBe(true);
    expect((await exchange.call(propose('c'), deadline)).response?.toString()).toBe('answer to c');
    exchange.close();
  });

  it('an unanswered call ends as DEADLINE_EXCEEDED shortly after its deadline; a cancelled one as CANCELLED at once', async () => {
    const server = await scripted(transport, () => undefined);
    const exchange = exchangeOf(server);
    const expired = codeOf(exchange.call(propose('slow'), Date.now() + 50));
    const controller = new AbortController();
    const cancelled = codeOf(exchange.call(propose('cancelled'), Date.now() + 60_000, controller.signal));
    controller.abort();
    expect(await cancelled).toBe(Status.CANCELLED);
    expect(await expired).toBe(Status.DEADLINE_EXCEEDED);
    expect(await codeOf(exchange.call(propose('x'), Date.now() + 1000, AbortSignal.abort()))).toBe(Status.CANCELLED);
    exchange.close();
  });

  it('close fails what is pending as UNAVAILABLE and refuses new calls', async () => {
    const server = await scripted(transport, () => undefined);
    const exchange = exchangeOf(server);
    const pending = codeOf(exchange.call(propose('p'), Date.now() + 60_000));
    await new Promise((resolve) => setTimeout(resolve, 20));
    exchange.close();
    expect(await pending).toBe(Status.UNAVAILABLE);
    expect(await codeOf(exchange.call(propose('q'), Date.now() + 1000))).toBe(Status.UNAVAILABLE);
  });

  it('a batch is cut before it would pass the channel message limit', async () => {
    const server = await scripted(transport, (stream, calls) => stream.write({ answers: calls.map(answerOf) }));
    const exchange = new NodeExchange(server.open, { maxSendBytes: 10_000, nowMs: Date.now });
    const deadline = Date.now() + 5000;
    const big = 'x'.repeat(4000);
    await Promise.all([1, 2, 3, 4, 5].map((n) => exchange.call(propose(`${big}${n}`), deadline)));
    expect(server.messages.length).toBeGreaterThanOrEqual(3);
    for (const message of server.messages) expect(message.reduce((sum, call) => sum + call.propose!.entry.length, 0)).toBeLessThanOrEqual(10_000);
    exchange.close();
  });
});

describe('NodeConnection and a member that predates framed Exchange streams', () => {
  it('takes the HTTP/2 answer to a framed connection for what it is: that call fails as not served, the next ones go on gRPC', async () => {
    // A bound grpc-js server: its port speaks HTTP/2 only, as a member's did before framed streams.
    const server = await scripted('grpc', (stream, calls) => stream.write({ answers: calls.map(answerOf) }));
    const connection = new NodeConnection(server.address, { maxReceiveBytes: 1 << 20, maxSendBytes: 1 << 20, keepaliveTimeMs: 10_000, keepaliveTimeoutMs: 5_000 });
    try {
      expect(connection.exchangeTransport).toBe('frames');
      const first = await connection.exchangeCall(propose('first'), Date.now() + 5000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(first).toMatchObject({ code: Status.UNAVAILABLE });
      expect(isNotServed(first)).toBe(true);
      expect(connection.exchangeTransport).toBe('grpc');
      expect((await connection.exchangeCall(propose('second'), Date.now() + 5000)).response?.toString()).toBe('answer to second');
      // The first call never reached the member's Exchange.
      expect(server.messages.flat().map((call) => call.propose?.entry.toString())).toEqual(['second']);
    } finally {
      connection.close();
    }
  });

  it('keeps framed streams with a member that takes them, across a broken connection', async () => {
    const server = await scripted('frames', (stream, calls) => stream.write({ answers: calls.map(answerOf) }));
    const connection = new NodeConnection(server.address, { maxReceiveBytes: 1 << 20, maxSendBytes: 1 << 20, keepaliveTimeMs: 10_000, keepaliveTimeoutMs: 5_000 });
    try {
      expect((await connection.exchangeCall(propose('a'), Date.now() + 5000)).response?.toString()).toBe('answer to a');
      server.breakStream(server.streams[0]!);
      await expect.poll(async () => (await connection.exchangeCall(propose('b'), Date.now() + 5000).catch(() => undefined))?.response?.toString()).toBe('answer to b');
      expect(connection.exchangeTransport).toBe('frames');
      expect(server.streams.length).toBe(2);
    } finally {
      connection.close();
    }
  });
});

describe('NodeExchange and a member that stops reading', () => {
  it('holds at most maxUnsentBytes of calls for it: more are refused with too many requests until it reads again, and the calls it holds stay pending', async () => {
    const sockets: Socket[] = [];
    // A member that greets, then never reads again while its connection stays up.
    const server = createServer((socket) => {
      sockets.push(socket);
      memberStream(socket).on('error', () => undefined);
      socket.pause();
    });
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    try {
      const maxUnsentBytes = 2 * 1024 * 1024;
      const exchange = new NodeExchange(framedExchange(`127.0.0.1:${port}`, { tls: null, maxReceiveBytes: 1024 * 1024, connectTimeoutMs: 5_000 }), {
        maxSendBytes: 1024 * 1024,
        maxUnsentBytes,
        nowMs: Date.now,
      });
      const entry = Buffer.alloc(256 * 1024, 0x61);
      const held: Promise<unknown>[] = [];
      let settledEarly = 0;
      let refused: unknown;
      // 400 calls are 100 MiB: far past what the kernel's socket buffers take before the gateway's own.
      for (let i = 0; i < 400 && refused === undefined; i++) {
        let outcome: { code?: unknown; message?: unknown } | undefined;
        const call = exchange.call({ propose: { entry, timeout_ms: 60_000 } }, Date.now() + 60_000).then(
          () => 'answered',
          (error: { code?: unknown; message?: unknown }) => (outcome = error),
        );
        // The call's batch is written on the next turn; a refusal has settled by then.
        await new Promise((resolve) => setImmediate(resolve));
        // The first call opens the connection: until it is up, everything waits in this side's
        // buffer (on a loaded machine, longer than the loop takes to fill it).
        for (let waited = 0; i === 0 && sockets.length === 0 && waited < 5_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
        if (isWireError(outcome, 'TooManyRequests')) refused = outcome;
        else held.push(call.finally(() => (settledEarly += 1)));
      }
      expect((refused as Error | undefined)?.message).toBe('etcdserver: too many requests');
      expect(held.length).toBeGreaterThan(maxUnsentBytes / entry.length);
      expect(settledEarly).toBe(0);
      // The member reads again: the backlog drains and calls are taken again.
      for (const socket of sockets) socket.resume();
      let accepted = false;
      for (let i = 0; i < 200 && !accepted; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        let outcome: unknown;
        const call = exchange.call({ propose: { entry, timeout_ms: 60_000 } }, Date.now() + 60_000).then(() => 'answered', (error: unknown) => (outcome = error));
        await new Promise((resolve) => setImmediate(resolve));
        accepted = outcome === undefined;
        // Refused ones (the backlog not drained yet) are settled already; the taken one is held.
        if (accepted) held.push(call);
        else expect(isWireError(outcome, 'TooManyRequests')).toBe(true);
      }
      expect(accepted).toBe(true);
      exchange.close();
      for (const outcome of await Promise.all(held)) expect((outcome as { code?: unknown }).code).toBe(Status.UNAVAILABLE);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });
});
