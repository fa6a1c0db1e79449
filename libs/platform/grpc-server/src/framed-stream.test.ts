// FramedStream on real loopback sockets: messages both ways, the ordered end against every other
// end, and each refusal (a frame over the bound, a wrong preface, an unknown kind, a silent peer).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createHttp2Server } from 'node:http2';
import { FramedStream, LengthPrefixedReader, isForeignFramedStream, splitAddress, type FramedStreamOptions } from './framed-stream';

const PREFACE = Buffer.from('TEST-FRAMES/1\r\n', 'latin1');

const json: Pick<FramedStreamOptions<unknown, unknown>, 'serialize' | 'deserialize'> = {
  serialize: (message) => Buffer.from(JSON.stringify(message)),
  deserialize: (bytes) => JSON.parse(bytes.toString()) as unknown,
};

function options(overrides: Partial<FramedStreamOptions<unknown, unknown>> = {}): FramedStreamOptions<unknown, unknown> {
  return { ...json, maxReceiveBytes: 1024, aliveIntervalMs: 10_000, silenceLimitMs: 15_000, pauseReadsWhileBlocked: false, ...overrides };
}

interface Recorded {
  readonly messages: unknown[];
  readonly events: string[];
}

function record(stream: FramedStream<unknown, unknown>): Recorded {
  const recorded: Recorded = { messages: [], events: [] };
  stream.on('data', (message) => recorded.messages.push(message));
  stream.on('end', () => recorded.events.push('end'));
  stream.on('error', (error: Error) => recorded.events.push(`error: ${error.message}`));
  return recorded;
}

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) server.close();
});

/** A server whose connections become FramedStreams with `serverOptions`; resolves to its port and their streams. */
async function listen(serverOptions: FramedStreamOptions<unknown, unknown>): Promise<{ port: number; accepted: Promise<FramedStream<unknown, unknown>> }> {
  let take!: (stream: FramedStream<unknown, unknown>) => void;
  const accepted = new Promise<FramedStream<unknown, unknown>>((resolve) => (take = resolve));
  const server = createServer((socket) => {
    sockets.push(socket);
    take(new FramedStream(socket, serverOptions, PREFACE));
  });
  servers.push(server);
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  return { port, accepted };
}

function client(port: number, clientOptions = options()): FramedStream<unknown, unknown> {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.write(PREFACE);
  return new FramedStream(socket, clientOptions);
}

/** A plain TCP server that hands each connection to `onSocket`; resolves to its port. */
async function rawServer(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    onSocket(socket);
  });
  servers.push(server);
  return new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

function frame(kind: number, body: Buffer, length = body.length + 1): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32LE(length, 0);
  header[4] = kind;
  return Buffer.concat([header, body]);
}

const until = async (condition: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('FramedStream', () => {
  it('carries messages both ways in order; an END reaches the other side as end, never as an error', async () => {
    const { port, accepted } = await listen(options({ pauseReadsWhileBlocked: true }));
    const near = client(port);
    const nearSeen = record(near);
    for (let i = 0; i < 50; i++) near.write({ call: i, pad: 'x'.repeat(i * 10) });
    const far = await accepted;
    const farSeen = record(far);
    await until(() => farSeen.messages.length === 50, 'the calls');
    expect(farSeen.messages.map((m) => (m as { call: number }).call)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    far.write({ answer: 'a' });
    far.write({ answer: 'b' });
    far.end();
    await until(() => nearSeen.events.length > 0, 'the end');
    expect(nearSeen.messages).toEqual([{ answer: 'a' }, { answer: 'b' }]);
    expect(nearSeen.events).toEqual(['end']);
    // The client closes once it has the END; the server's side sees no error either.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(farSeen.events).toEqual([]);
  });

  it('a connection that closes without END is an error on the other side (a member that crashed, not one that drained)', async () => {
    const { port, accepted } = await listen(options());
    const near = client(port);
    const nearSeen = record(near);
    near.write({ call: 1 });
    const far = await accepted;
    const farSeen = record(far);
    await until(() => farSeen.messages.length === 1, 'the call');
    far.cancel();
    await until(() => nearSeen.events.length > 0, 'the error');
    expect(nearSeen.events).toEqual(['error: the connection ended without END']);
    expect(farSeen.events).toEqual([]);
  });

  it('refuses a frame over the bound as soon as its length is in, and a frame of an unknown kind', async () => {
    for (const [bytes, reason] of [
      [frame(0, Buffer.alloc(0), 1026), 'frame of 1026 bytes exceeds 1025'],
      [frame(9, Buffer.from('{}')), 'unknown frame kind 9'],
      [frame(0, Buffer.from('not json')), 'a message did not decode'],
    ] as const) {
      const { port, accepted } = await listen(options());
      const socket = connect({ host: '127.0.0.1', port });
      sockets.push(socket);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(Buffer.concat([PREFACE, bytes]));
      const farSeen = record(await accepted);
      await closed;
      expect(farSeen.events).toHaveLength(1);
      expect(farSeen.events[0]).toContain(reason);
    }
  });

  it('closes a connection that does not start with the preface', async () => {
    const { port, accepted } = await listen(options());
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(Buffer.from('TEST-FRAMES/2\r\n', 'latin1'));
    const farSeen = record(await accepted);
    await closed;
    expect(farSeen.events).toEqual(['error: the connection did not start with the preface']);
  });

  it('cuts a peer that sends nothing for the keepalive interval plus its timeout; a live one is kept by its keepalives', async () => {
    const { port, accepted } = await listen(options({ aliveIntervalMs: 40, silenceLimitMs: 80 }));
    // A live client: its own keepalives (every 40 ms) keep the server's side open.
    const live = client(port, options({ aliveIntervalMs: 40, silenceLimitMs: 80 }));
    const liveSeen = record(live);
    const liveFar = record(await accepted);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(liveSeen.events).toEqual([]);
    expect(liveFar.events).toEqual([]);
    live.cancel();

    // A silent client: sends the preface, then nothing (and never reads).
    const second = await listen(options({ aliveIntervalMs: 40, silenceLimitMs: 80 }));
    const silent = connect({ host: '127.0.0.1', port: second.port });
    sockets.push(silent);
    silent.write(PREFACE);
    const silentFar = record(await second.accepted);
    await until(() => silentFar.events.length > 0, 'the cut');
    expect(silentFar.events[0]).toMatch(/^error: nothing heard for 80 ms/);
  });

  it('cuts a peer that keeps sending keepalives but takes nothing of what it is sent; one that sends messages meanwhile is kept', async () => {
    /** A far side that never reads and writes `every20ms` every 20 ms; the near side's stream after 32 MiB written to it. */
    const flooded = async (every20ms: Buffer): Promise<{ near: FramedStream<unknown, unknown>; nearSeen: Recorded }> => {
      const port = await rawServer((socket) => {
        socket.pause();
        // Once the near side cuts, a write here meets a reset connection.
        socket.on('error', () => undefined);
        const timer = setInterval(() => socket.write(every20ms), 20);
        socket.once('close', () => clearInterval(timer));
      });
      // A limit well above the far side's 20 ms: writing the 32 MiB below holds this event loop a
      // while (longer on a loaded machine), and the far side's keepalives must be heard after it.
      const near = client(port, options({ aliveIntervalMs: 40, silenceLimitMs: 1000, maxReceiveBytes: 1 << 20 }));
      const nearSeen = record(near);
      // Far more than the kernel's socket buffers take: the rest waits in this side's.
      const big = 'x'.repeat(1 << 20);
      for (let i = 0; i < 32; i++) near.write({ big });
      expect(near.unsentBytes).toBeGreaterThan(0);
      return { near, nearSeen };
    };
    const idle = await flooded(frame(2, Buffer.alloc(0)));
    await until(() => idle.nearSeen.events.length > 0, 'the cut');
    expect(idle.nearSeen.events).toEqual(['error: nothing taken for 1000 ms']);
    // A peer busy answering (it pauses its reads while its own writes wait) is making progress.
    const busy = await flooded(frame(0, Buffer.from('{}')));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(busy.nearSeen.events).toEqual([]);
    expect(busy.nearSeen.messages.length).toBeGreaterThan(10);
    busy.near.cancel();
  });

  it('a side that pauses reads while blocked takes no new messages until its answers are taken', async () => {
    const { port, accepted } = await listen(options({ pauseReadsWhileBlocked: true, maxReceiveBytes: 1 << 20 }));
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    socket.write(PREFACE);
    socket.pause(); // the client reads nothing
    const far = await accepted;
    const farSeen = record(far);
    socket.write(frame(0, Buffer.from('"first"')));
    await until(() => farSeen.messages.length === 1, 'the first call');
    // Far more answers than the kernel's buffers on both ends take: what is left waits in the
    // server's socket, and the server reads no calls meanwhile.
    const big = 'y'.repeat(256 * 1024);
    const writable: boolean[] = [];
    for (let i = 0; i < 128; i++) writable.push(far.write(big));
    expect(writable.at(-1)).toBe(false);
    socket.write(frame(0, Buffer.from('"second"')));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(farSeen.messages).toHaveLength(1);
    socket.resume(); // the client reads: the server drains, then reads again
    await until(() => farSeen.messages.length === 2, 'the second call');
    expect(farSeen.events).toEqual([]);
    expect(farSeen.messages[1]).toBe('second');
  });
});

describe('FramedStream: a side blocked on its writes', () => {
  it('keeps a connection whose other side reads slowly (its writes are being taken), though it hears nothing meanwhile', async () => {
    const { port, accepted } = await listen(options({ pauseReadsWhileBlocked: true, aliveIntervalMs: 50, silenceLimitMs: 300, maxReceiveBytes: 1 << 20 }));
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    socket.write(PREFACE);
    socket.pause();
    const far = await accepted;
    const farSeen = record(far);
    const big = 'z'.repeat(256 * 1024);
    for (let i = 0; i < 64; i++) far.write(big);
    let chunks = 0;
    socket.on('data', () => chunks++); // paused by hand before: the listener does not resume it
    // A live client: keepalives every 50 ms (unread while the server is blocked), and it takes
    // some of the answers every 100 ms, for 1.5 s: five silence limits. Each round reads for 20 ms
    // from its first chunk on (or once nothing is left to send): a window timed from the resume
    // alone could pass unread on a loaded machine (a .ci/run saw 'nothing heard' so).
    const alive = setInterval(() => socket.write(frame(2, Buffer.alloc(0))), 50);
    try {
      for (let i = 0; i < 15; i++) {
        const before = chunks;
        socket.resume();
        await until(() => chunks > before || far.unsentBytes === 0, `a chunk read (round ${i})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        socket.pause();
        await new Promise((resolve) => setTimeout(resolve, 80));
      }
      expect(farSeen.events).toEqual([]);
    } finally {
      clearInterval(alive);
    }
    // Then it sends and takes nothing: cut within a few silence limits.
    await until(() => farSeen.events.length > 0, 'the cut');
    expect(farSeen.events[0]).toMatch(/nothing heard/);
  });
});

/** The error of a client expecting the greeting from a server that sends `bytes` on every connection. */
async function firstErrorFrom(bytes: Buffer): Promise<unknown> {
  const port = await rawServer((socket) => socket.write(bytes));
  const near = client(port, options({ expectGreeting: true }));
  const errors: unknown[] = [];
  near.on('error', (error) => errors.push(error));
  await until(() => errors.length > 0, 'the error');
  return errors[0];
}

describe('FramedStream against a peer that does not speak it', () => {
  it('a client expecting the greeting takes an HTTP/2 server for foreign, and a greeting server for its own even when what follows fails', async () => {
    const h2 = createHttp2Server();
    const h2Port = await new Promise<number>((resolve) => h2.listen(0, '127.0.0.1', () => resolve((h2.address() as { port: number }).port)));
    try {
      const near = client(h2Port, options({ expectGreeting: true }));
      const errors: unknown[] = [];
      near.on('error', (error) => errors.push(error));
      near.write({ call: 1 });
      await until(() => errors.length > 0, 'the error');
      expect(isForeignFramedStream(errors[0])).toBe(true);
    } finally {
      h2.close();
    }

    // The greeting, then (in the same read) a frame over the bound: an error, never foreign.
    const greetedError = await firstErrorFrom(Buffer.concat([frame(2, Buffer.alloc(0)), frame(0, Buffer.alloc(0), 1 << 30)]));
    expect((greetedError as Error).message).toContain('exceeds');
    expect(isForeignFramedStream(greetedError)).toBe(false);

    // A greeting server that fails at once: not foreign either.
    const { port, accepted } = await listen(options({ greet: true }));
    const near = client(port, options({ expectGreeting: true }));
    const errors: unknown[] = [];
    near.on('error', (error) => errors.push(error));
    (await accepted).cancel();
    await until(() => errors.length > 0, 'the error');
    expect(isForeignFramedStream(errors[0])).toBe(false);
  });

  it('a first frame other than the greeting (a peer that speaks frames but does not greet) is foreign', async () => {
    expect(isForeignFramedStream(await firstErrorFrom(frame(0, Buffer.from('{}'))))).toBe(true);
  });
});

describe('LengthPrefixedReader', () => {
  it('joins a trickle of tiny chunks as it comes: a frame sent a byte at a time is held in one buffer, and comes out whole', () => {
    const reader = new LengthPrefixedReader(1 << 20, (length) => new Error(`too long: ${length}`));
    const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i & 0xff));
    const bytes = Buffer.concat([Buffer.from([0xa0, 0x86, 0x01, 0x00]), body]);
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i++) {
      out.push(...reader.push(bytes.subarray(i, i + 1)));
      // Chunks of at least 4 KiB each, but the last: never one object per byte.
      if (i === 50_000) expect((reader as unknown as { chunks: Buffer[] }).chunks.length).toBeLessThanOrEqual(Math.ceil(50_001 / 4096) + 1);
    }
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(body)).toBe(true);
  });

  it('copies a frame cut across chunks into a buffer of its own size, and leaves a frame inside one chunk where it is', () => {
    const reader = new LengthPrefixedReader(1 << 20, (length) => new Error(`too long: ${length}`));
    const prefixed = (body: Buffer): Buffer => Buffer.concat([Buffer.from([body.length & 0xff, body.length >> 8, 0, 0]), body]);
    const first = Buffer.alloc(10_000, 1);
    const second = Buffer.alloc(6_000, 2);
    const bytes = Buffer.concat([prefixed(first), prefixed(second), prefixed(Buffer.alloc(5, 3))]);
    const a = Buffer.from(bytes.subarray(0, 7_000));
    const b = Buffer.from(bytes.subarray(7_000));
    expect(reader.push(a)).toEqual([]);
    const out = reader.push(b);
    expect(out.map((frame) => frame.length)).toEqual([10_000, 6_000, 5]);
    expect(out[0]!.equals(first) && out[1]!.equals(second)).toBe(true);
    expect(out[0]!.buffer.byteLength).toBe(10_004);
    expect(out[1]!.buffer).toBe(b.buffer);
  });
});

describe('splitAddress', () => {
  it('splits host and port, IPv6 hosts in brackets included', () => {
    expect(splitAddress('127.0.0.1:2380')).toEqual({ host: '127.0.0.1', port: 2380 });
    expect(splitAddress('raft-node-1:2380')).toEqual({ host: 'raft-node-1', port: 2380 });
    expect(splitAddress('[::1]:2380')).toEqual({ host: '::1', port: 2380 });
  });
});
