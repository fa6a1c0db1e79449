// The Exchange connection's two ends over real loopback sockets: messages both ways, the member's
// OK end told apart from a broken connection, a silent member found by the keepalive, and hostile
// bytes closing the connection without harm.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { wardNodeServiceDefinition, type ExchangeAnswers__Output, type ExchangeCalls__Output } from '@ward/etcd/proto';
import { EXCHANGE_PREFACE, ExchangeConnection, ExchangeSocket } from './exchange-socket';

const servers: Server[] = [];
const sockets: (Socket | ExchangeSocket)[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) (socket instanceof ExchangeSocket ? socket.cancel() : socket.destroy());
  for (const server of servers.splice(0)) server.close();
});

async function listen(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer(onSocket);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** A member end that records every message of calls and hands each connection to `onConnection`. */
async function member(onConnection: (connection: ExchangeConnection, calls: ExchangeCalls__Output[]) => void, keepaliveTimeMs = 10_000): Promise<number> {
  return listen((socket) => {
    const calls: ExchangeCalls__Output[] = [];
    const connection = new ExchangeConnection(socket, { maxReceiveBytes: 64 * 1024, maxBufferedBytes: 1024 * 1024, keepaliveTimeMs });
    connection.on('data', (message: ExchangeCalls__Output) => calls.push(message));
    onConnection(connection, calls);
  });
}

function gateway(port: number, keepalive = { timeMs: 10_000, timeoutMs: 5000 }): ExchangeSocket {
  const socket = new ExchangeSocket({ address: `127.0.0.1:${port}`, tls: null, maxReceiveBytes: 64 * 1024, connectTimeoutMs: 2000, keepalive });
  sockets.push(socket);
  return socket;
}

/** Resolves with the first of the events that end a gateway's stream. */
function endOf(socket: ExchangeSocket): Promise<'end' | 'error'> {
  return new Promise((resolve) => {
    socket.once('end', () => resolve('end'));
    socket.once('error', () => resolve('error'));
  });
}

/** A call; ids are uint64s in decimal, as NodeExchange numbers them. */
const call = (id: string) => ({ id, propose: { entry: Buffer.from(`entry ${id}`), timeout_ms: 1000 } });
const answer = (id: string) => ({ id, answer: { response: Buffer.from(`answer ${id}`) } });

describe('Exchange connections', () => {
  it('carry calls one way and answers the other; the member ends with the End frame after its answers', async () => {
    const port = await member((connection) => {
      connection.on('data', (message: ExchangeCalls__Output) => {
        connection.write({ answers: message.calls.map((c) => answer(c.id)) });
        if (message.calls.some((c) => c.id === '3')) connection.end();
      });
    });
    const socket = gateway(port);
    const received: ExchangeAnswers__Output[] = [];
    socket.on('data', (message: ExchangeAnswers__Output) => received.push(message));
    const ended = endOf(socket);
    socket.write({ calls: [call('1'), call('2')] });
    socket.write({ calls: [call('3')] });
    expect(await ended).toBe('end');
    expect(received.flatMap((m) => m.answers.map((a) => `${a.id}:${Buffer.from(a.answer!.response!).toString()}`))).toEqual(['1:answer 1', '2:answer 2', '3:answer 3']);
  });

  it('a connection the member cuts, or that never connects, ends as an error', async () => {
    const port = await member((connection) => connection.on('data', () => connection.destroy()));
    const socket = gateway(port);
    const ended = endOf(socket);
    socket.write({ calls: [call('1')] });
    expect(await ended).toBe('error');
    const closedPort = await listen(() => undefined);
    servers.pop()!.close();
    expect(await endOf(gateway(closedPort))).toBe('error');
  });

  it('a member that stops sending (no keepalive frame) is found silent; a live one is not', async () => {
    // Accepts and reads, never writes: what a paused or unplugged member looks like.
    const silentPort = await listen((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    const startedMs = performance.now();
    const silent = gateway(silentPort, { timeMs: 100, timeoutMs: 100 });
    expect(await endOf(silent)).toBe('error');
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(200);
    const livePort = await member(() => undefined, 50);
    const live = gateway(livePort, { timeMs: 100, timeoutMs: 100 });
    let ended = false;
    live.once('error', () => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(ended).toBe(false);
  });

  it('hostile bytes close the member end (cancelled) without reaching the server: oversized, unknown kind, undecodable', async () => {
    const cancelled: string[] = [];
    const delivered: ExchangeCalls__Output[][] = [];
    const port = await member((connection, calls) => {
      delivered.push(calls);
      connection.on('cancelled', () => cancelled.push('cancelled'));
    });
    const frame = (...bytes: number[][]): Buffer => {
      const body = Buffer.from(bytes.flat());
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32LE(body.length, 0);
      return Buffer.concat([prefix, body]);
    };
    const oversized = Buffer.alloc(4);
    oversized.writeUInt32LE(64 * 1024 + 1, 0);
    const cases = [oversized, frame([9], [1, 2, 3]), frame([1], [0xff, 0xff, 0xff, 0xff, 0xff])];
    for (const bytes of cases) {
      const raw = connect(port, '127.0.0.1');
      sockets.push(raw);
      raw.on('error', () => undefined);
      raw.resume();
      await new Promise((resolve) => raw.once('connect', resolve));
      raw.write(Buffer.concat([EXCHANGE_PREFACE, bytes]));
      await new Promise((resolve) => raw.once('close', resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(cancelled).toHaveLength(cases.length);
    expect(delivered.every((calls) => calls.length === 0)).toBe(true);
  });

  it('encodes with the Exchange method\'s own serializers (what grpc-js sends)', async () => {
    let raw: Buffer | undefined;
    const port = await listen((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        raw = Buffer.concat(chunks);
      });
    });
    const socket = gateway(port);
    const message = { calls: [call('7')] };
    socket.write(message);
    const grpcBytes = wardNodeServiceDefinition()['Exchange']!.requestSerialize(message);
    const expected = 4 + 1 + grpcBytes.length;
    while ((raw?.length ?? 0) < EXCHANGE_PREFACE.length + expected) await new Promise((resolve) => setTimeout(resolve, 5));
    const body = raw!.subarray(EXCHANGE_PREFACE.length);
    expect(body.readUInt32LE(0)).toBe(1 + grpcBytes.length);
    expect(body[4]).toBe(1);
    expect(body.subarray(5)).toEqual(grpcBytes);
  });
});
