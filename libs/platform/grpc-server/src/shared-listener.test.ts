import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestPki } from '@ward/testing/cluster';
import { HTTP2_PREFACE, protocolOf, startSharedListener, type SharedListener, type SharedListenerOptions, type SharedProtocol } from './shared-listener';

const FRAMES_PREFACE = Buffer.from('PRX frames/1\r\n', 'latin1');

describe('protocolOf', () => {
  const grpc: SharedProtocol = { name: 'grpc', preface: HTTP2_PREFACE, take: () => undefined };
  const frames: SharedProtocol = { name: 'frames', preface: FRAMES_PREFACE, take: () => undefined };
  const http: SharedProtocol = { name: 'http', take: () => undefined };

  it('tells the HTTP/2 preface from anything else, waiting while the bytes are a prefix of it', () => {
    const protocols = [grpc, http];
    expect(protocolOf(HTTP2_PREFACE, protocols)).toBe(grpc);
    expect(protocolOf(Buffer.concat([HTTP2_PREFACE, Buffer.from([0, 0, 0])]), protocols)).toBe(grpc);
    expect(protocolOf(HTTP2_PREFACE.subarray(0, 3), protocols)).toBeUndefined();
    expect(protocolOf(Buffer.from('POST /v3/kv/range HTTP/1.1\r\n'), protocols)).toBeNull();
    expect(protocolOf(Buffer.from('PRI * HTTP/1.1'), protocols)).toBeNull();
    expect(protocolOf(Buffer.from('G'), protocols)).toBeNull();
  });

  it('waits while the bytes are a prefix of any preface, and picks the one they complete', () => {
    const protocols = [grpc, frames];
    // Both prefaces start with "PR".
    expect(protocolOf(Buffer.from('PR'), protocols)).toBeUndefined();
    expect(protocolOf(Buffer.from('PRX'), protocols)).toBeUndefined();
    expect(protocolOf(Buffer.concat([FRAMES_PREFACE, Buffer.from('data')]), protocols)).toBe(frames);
    expect(protocolOf(HTTP2_PREFACE, protocols)).toBe(grpc);
    expect(protocolOf(Buffer.from('PRY'), protocols)).toBeNull();
  });
});

/** What each side received: the protocol chosen and every byte the socket then delivered. */
function recorder(): { received: Array<{ protocol: string; bytes: Promise<Buffer> }>; take: (protocol: string) => (socket: Duplex) => void } {
  const received: Array<{ protocol: string; bytes: Promise<Buffer> }> = [];
  return {
    received,
    take: (protocol) => (socket) => {
      const chunks: Buffer[] = [];
      const bytes = new Promise<Buffer>((resolve) => {
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          const all = Buffer.concat(chunks);
          if (all.includes('END')) resolve(all);
        });
      });
      socket.resume();
      received.push({ protocol, bytes });
    },
  };
}

let listener: SharedListener | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await listener?.close(0);
  listener = undefined;
});

/** The client port's protocols: gRPC by preface or h2, HTTP/1.1 by ALPN and for anything else. */
function clientPort(take: (protocol: string) => (socket: Duplex) => void): Pick<SharedListenerOptions, 'protocols' | 'fallback'> {
  return {
    protocols: [
      { name: 'grpc', preface: HTTP2_PREFACE, alpn: 'h2', take: take('grpc') },
      { name: 'http', alpn: 'http/1.1', take: take('http') },
    ],
    fallback: { name: 'http', take: take('http') },
  };
}

async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('startSharedListener, plaintext', () => {
  it('hands a connection with the preface to gRPC and others to HTTP, with every byte, even when the first bytes come one at a time', async () => {
    const { received, take } = recorder();
    listener = await startSharedListener({ host: '127.0.0.1', port: 0, tls: null, sniffTimeoutMs: 10_000, maxConnectionsCount: 10, ...clientPort(take) });
    const h2 = connect(listener.port, '127.0.0.1');
    sockets.push(h2);
    for (const byte of HTTP2_PREFACE) {
      h2.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    h2.write('frames END');
    const h1 = connect(listener.port, '127.0.0.1');
    sockets.push(h1);
    h1.write('GET /version HTTP/1.1\r\n\r\nEND');
    await until(() => received.length === 2);
    const byProtocol = Object.fromEntries(await Promise.all(received.map(async (r) => [r.protocol, (await r.bytes).toString('latin1')])));
    expect(byProtocol).toEqual({ grpc: `${HTTP2_PREFACE.toString('latin1')}frames END`, http: 'GET /version HTTP/1.1\r\n\r\nEND' });
    expect(listener.sniffingCount()).toBe(0);
  });

  it('without a fallback, hands each preface to its protocol and closes a connection that matches none', async () => {
    const { received, take } = recorder();
    listener = await startSharedListener({
      host: '127.0.0.1',
      port: 0,
      tls: null,
      sniffTimeoutMs: 10_000,
      maxConnectionsCount: 10,
      protocols: [
        { name: 'grpc', preface: HTTP2_PREFACE, take: take('grpc') },
        { name: 'frames', preface: FRAMES_PREFACE, take: take('frames') },
      ],
    });
    const frames = connect(listener.port, '127.0.0.1');
    const stranger = connect(listener.port, '127.0.0.1');
    sockets.push(frames, stranger);
    frames.write(Buffer.concat([FRAMES_PREFACE, Buffer.from('one END')]));
    const closed = new Promise((resolve) => stranger.on('close', resolve));
    stranger.write('GET / HTTP/1.1\r\n\r\n');
    await closed;
    await until(() => received.length === 1);
    expect(received[0]!.protocol).toBe('frames');
    expect((await received[0]!.bytes).toString('latin1')).toBe(`${FRAMES_PREFACE.toString('latin1')}one END`);
    await until(() => listener!.sniffingCount() === 0);
    expect(received).toHaveLength(1);
  });

  it('closes a connection that does not tell its protocol in time, and hands it to nobody', async () => {
    const { received, take } = recorder();
    listener = await startSharedListener({ host: '127.0.0.1', port: 0, tls: null, sniffTimeoutMs: 200, maxConnectionsCount: 10, ...clientPort(take) });
    const slow = connect(listener.port, '127.0.0.1');
    sockets.push(slow);
    slow.write(HTTP2_PREFACE.subarray(0, 10));
    const closed = new Promise((resolve) => slow.on('close', resolve));
    await until(() => listener!.sniffingCount() === 1);
    await closed;
    // The server side lets go of it too (the client may see the close first).
    await until(() => listener!.sniffingCount() === 0);
    expect(received).toHaveLength(0);
  });
});

describe('startSharedListener, TLS', () => {
  it('dispatches on ALPN (h2: gRPC, http/1.1: HTTP) and on the decrypted bytes without ALPN', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shared-listener-'));
    const files = createTestPki(dir, []);
    const pki = { server: { cert: readFileSync(files.server.certFile), key: readFileSync(files.server.keyFile) }, ca: { cert: readFileSync(files.caFile) } };
    rmSync(dir, { recursive: true, force: true });
    const { received, take } = recorder();
    listener = await startSharedListener({
      host: '127.0.0.1',
      port: 0,
      tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert, requireClientCertificate: false },
      sniffTimeoutMs: 10_000,
      maxConnectionsCount: 10,
      ...clientPort(take),
    });
    const open = (alpn: string[] | undefined, text: string): void => {
      const socket = tlsConnect({ host: '127.0.0.1', port: listener!.port, ca: pki.ca.cert, servername: 'localhost', ...(alpn === undefined ? {} : { ALPNProtocols: alpn }) }, () => socket.write(text));
      sockets.push(socket);
    };
    open(['h2'], 'not even a preface END');
    open(['http/1.1'], 'GET / HTTP/1.1\r\n\r\nEND');
    open(undefined, `${HTTP2_PREFACE.toString('latin1')}END`);
    await until(() => received.length === 3);
    const got = await Promise.all(received.map(async (r) => `${r.protocol}:${(await r.bytes).toString('latin1').slice(0, 6)}`));
    expect(got.sort()).toEqual(['grpc:PRI * ', 'grpc:not ev', 'http:GET / ']);
  });
});
