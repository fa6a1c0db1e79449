// The client URL under abuse: a watch reader that never reads (bounded, dropped, the gateway
// stays up), 1,000 concurrent HTTP watches, HTTP watches counted in the same per-caller accounting
// as gRPC streams, malformed chunked input on a keep-alive stream, and slowloris on the shared
// port while gRPC keeps serving: silent connections, dripped headers, a dripped unary body and a
// dripped request object inside a stream are all cut, while watch and keep-alive streams whose
// bodies stay open outlive the request deadline as long as they are used.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import type { Gateway } from '../src/index';
import type { EtcdTestClient } from '../src/testing/etcd-client';
import { HTTP2_PREFACE } from '@ward/platform/grpc-server';
import { bytes, must, startWardCluster, type WardCluster } from './support/ward-cluster';

let ward: WardCluster;
/** Short stall, sniff, request and stream idle timeouts, room for 1,000 anonymous streams from 127.0.0.1. */
let roomy: Gateway;
let roomyClient: EtcdTestClient;
/** At most 5 streams per anonymous address, small bodies. */
let tight: Gateway;
let tightClient: EtcdTestClient;

beforeAll(async () => {
  ward = await startWardCluster({ size: 1 });
  roomy = await ward.addGateway({
    httpStreamStallTimeoutMs: 1000,
    clientPortSniffTimeoutMs: 1000,
    httpRequestTimeoutMs: 1000,
    streamIdleTimeoutMs: 2000,
    maxStreamsPerAddressCount: 1500,
    maxStreamsPerUserCount: 1500,
  });
  tight = await ward.addGateway({ maxStreamsPerAddressCount: 5, httpBodyLimitBytes: 4096 });
  roomyClient = ward.client(roomy);
  tightClient = ward.client(tight);
}, 180_000);

afterAll(async () => {
  await ward?.stop();
});

/** A raw connection to the client port, keeping everything it receives. */
class RawClient {
  readonly socket: Socket;
  text = '';
  bytesReceived = 0;
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.bytesReceived += chunk.length;
      this.text += chunk.toString('latin1');
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  /** `{"result"` objects received so far. */
  results(): number {
    return this.text.split('{"result"').length - 1;
  }
}

function postHead(path: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}`;
}

function watchRequest(key: string, rangeEnd?: string): string {
  const body = JSON.stringify({ create_request: { key: bytes(key).toString('base64'), ...(rangeEnd === undefined ? {} : { range_end: bytes(rangeEnd).toString('base64') }) } });
  return `${postHead('/v3/watch', `Content-Length: ${body.length}\r\n\r\n`)}${body}`;
}

function openWatch(gateway: Gateway, key: string, rangeEnd?: string): RawClient {
  const client = new RawClient(gateway.grpcPort);
  client.socket.write(watchRequest(key, rangeEnd));
  return client;
}

async function watchStreams(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`http://${gateway.httpAddress}/metrics`)).text();
  return Number(/^ward_gateway_watch_streams (\d+)/m.exec(text)?.[1] ?? NaN);
}

async function rangeWorks(client: EtcdTestClient): Promise<void> {
  await must(client.call('KV', 'Range', { key: bytes('anything') }), 'Range');
}

describe('a watch reader that never reads', () => {
  it('is bounded and dropped; the gateway keeps serving', async () => {
    const reader = openWatch(roomy, 'big/', 'big0');
    await eventually('created', async () => (reader.results() >= 1 ? true : undefined), 10_000);
    // From here on nothing is read: the kernel's buffers fill, then the gateway's.
    reader.socket.pause();
    const value = Buffer.alloc(512 * 1024, 0x61);
    const puts = 80;
    for (let i = 0; i < puts; i++) await must(roomyClient.call('KV', 'Put', { key: bytes(`big/${i}`), value }), 'Put');
    // Every event would be this many bytes of JSON (base64 values): far more than was taken.
    const wouldSend = puts * Math.ceil((value.length * 4) / 3);
    await eventually('the stalled watch dropped', async () => ((await watchStreams(roomy)) === 0 ? true : undefined), 30_000);
    await rangeWorks(roomyClient);
    // What reached the reader before the drop, and its end.
    reader.socket.resume();
    await reader.closed;
    expect(reader.bytesReceived).toBeLessThan(wouldSend / 2);
    expect(reader.results()).toBeLessThan(puts);
  });
});

describe('a snapshot reader that never reads', () => {
  it('is dropped once its output stalls, having taken a bounded part; the gateway keeps serving', async () => {
    // The store holds at least the 80 values of 512 KiB the watch test above put (40 MiB), so the
    // snapshot's JSON lines are over 53 MiB.
    const atLeastBytes = Math.ceil((80 * 512 * 1024 * 4) / 3);
    const reader = new RawClient(roomy.grpcPort);
    reader.socket.write(`${postHead('/v3/maintenance/snapshot', 'Content-Length: 2\r\n\r\n')}{}`);
    await eventually('first chunk', async () => (reader.results() >= 1 ? true : undefined), 10_000);
    reader.socket.pause();
    // Stalled for longer than roomy's stall timeout (1 s): dropped meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await rangeWorks(roomyClient);
    reader.socket.resume();
    await reader.closed;
    expect(reader.bytesReceived).toBeLessThan(atLeastBytes / 2);
    expect(reader.text).not.toMatch(/0\r\n\r\n$/);
    // A reader that reads gets the whole file.
    const whole = await fetch(`http://127.0.0.1:${roomy.grpcPort}/v3/maintenance/snapshot`, { method: 'POST', body: '{}' });
    expect(whole.status).toBe(200);
    expect((await whole.text()).length).toBeGreaterThan(atLeastBytes);
  });
});

describe('HTTP watches in the per-caller accounting of gRPC streams', () => {
  it('beyond the per-address bound a watch is refused with etcd\'s too many requests, over HTTP and gRPC alike, and closing gives the slots back', async () => {
    const watches = Array.from({ length: 5 }, () => openWatch(tight, 'acct'));
    try {
      await eventually('5 watches created', async () => (watches.every((w) => w.results() >= 1) ? true : undefined), 10_000);
      const refused = openWatch(tight, 'acct');
      await eventually('refusal', async () => (refused.text.includes('"grpc_code":8') ? true : undefined), 10_000);
      refused.socket.destroy();
      // The stream's own error, before any answer: grpc-gateway's stream error object under the code's status.
      expect(refused.text).toMatch(/^HTTP\/1\.1 429 /);
      expect(refused.text).toContain('{"error":{"grpc_code":8,"http_code":429,"message":"etcdserver: too many requests","http_status":"Too Many Requests"}}');
      // A gRPC Watch from the same address is counted in the same bound.
      const grpcWatch = tightClient.client('Watch') as unknown as { Watch(): NodeJS.EventEmitter & { write(m: object): void; end(): void } };
      const stream = grpcWatch.Watch();
      const grpcError = new Promise<{ code: number; details: string }>((resolve) => stream.on('error', resolve));
      stream.write({ create_request: { key: bytes('acct') } });
      expect(await grpcError).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    } finally {
      for (const watch of watches) watch.socket.destroy();
    }
    await eventually('slots given back', async () => ((await watchStreams(tight)) === 0 ? true : undefined), 10_000);
    const again = openWatch(tight, 'acct');
    await eventually('admitted again', async () => (again.results() >= 1 ? true : undefined), 10_000);
    again.socket.destroy();
  });
});

describe('1,000 concurrent HTTP watches', () => {
  it('are all created and all receive the event', async () => {
    const count = 1000;
    const watches: RawClient[] = [];
    // Opened in batches: the listen backlog is not what is under test.
    for (let i = 0; i < count; i += 100) {
      const batch = Array.from({ length: 100 }, () => openWatch(roomy, 'many'));
      watches.push(...batch);
      await eventually('batch created', async () => (batch.every((w) => w.results() >= 1) ? true : undefined), 60_000);
    }
    expect(await watchStreams(roomy)).toBe(count);
    await must(roomyClient.call('KV', 'Put', { key: bytes('many'), value: bytes('v') }), 'Put');
    await eventually('every watch got the event', async () => (watches.every((w) => w.results() >= 2) ? true : undefined), 60_000);
    for (const watch of watches) watch.socket.destroy();
    await eventually('all closed', async () => ((await watchStreams(roomy)) === 0 ? true : undefined), 30_000);
    await rangeWorks(roomyClient);
  });
});

describe('malformed input on a keep-alive stream', () => {
  async function grant(): Promise<string> {
    const answer = (await must(tightClient.call('Lease', 'LeaseGrant', { TTL: 60 }), 'LeaseGrant')) as { ID: string | number };
    return String(answer.ID);
  }

  it('a bad chunk ends the stream after the answers given; a too-large request ends it too; slots are given back', async () => {
    const id = await grant();
    const head = postHead('/v3/lease/keepalive', 'Transfer-Encoding: chunked\r\n\r\n');
    const line = `{"ID":"${id}"}\n`;
    const chunk = (text: string): string => `${text.length.toString(16)}\r\n${text}\r\n`;
    // More rounds than the per-address bound: a slot not given back would refuse the later ones.
    for (let round = 0; round < 8; round++) {
      const client = new RawClient(tight.grpcPort);
      client.socket.write(head + chunk(line));
      await eventually('first answer', async () => (client.results() === 1 ? true : undefined), 10_000);
      client.socket.write(round % 2 === 0 ? 'zz\r\nnot a chunk\r\n' : chunk(`{"ID":"${'9'.repeat(5000)}"}`));
      await client.closed;
      expect(client.text).toMatch(/^HTTP\/1\.1 200 /);
      expect(client.results()).toBe(1);
    }
    const after = new RawClient(tight.grpcPort);
    after.socket.write(head + chunk(line) + '0\r\n\r\n');
    await eventually('answered', async () => (after.results() === 1 ? true : undefined), 10_000);
    await rangeWorks(tightClient);
  });
});

describe('slowloris on the shared port', () => {
  it('connections that never tell their protocol, or drip their headers, are closed while gRPC keeps serving', async () => {
    const silent = Array.from({ length: 100 }, () => new RawClient(roomy.grpcPort));
    const halfPreface = Array.from({ length: 100 }, () => {
      const client = new RawClient(roomy.grpcPort);
      client.socket.write(HTTP2_PREFACE.subarray(0, 16));
      return client;
    });
    const drippers = Array.from({ length: 100 }, () => {
      const client = new RawClient(roomy.grpcPort);
      client.socket.write('GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      return client;
    });
    const drip = setInterval(() => {
      for (const client of drippers) if (!client.socket.destroyed) client.socket.write('X-Slow: 1\r\n');
    }, 200);
    try {
      // gRPC on the same port serves meanwhile, every call.
      const until = Date.now() + 3000;
      let calls = 0;
      while (Date.now() < until) {
        await rangeWorks(roomyClient);
        calls += 1;
      }
      expect(calls).toBeGreaterThan(0);
      await Promise.all([...silent, ...halfPreface, ...drippers].map((client) => client.closed));
    } finally {
      clearInterval(drip);
    }
    // The drippers never got an answer to their request.
    expect(drippers.filter((client) => client.text.includes('etcdserver'))).toHaveLength(0);
    await rangeWorks(roomyClient);
  });
});

describe('deadlines: streams in use outlive the request deadline, slow requests do not', () => {
  const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
  /** Longer than roomy's request deadline (1 s) plus its check interval (1 s), with room. */
  const BEYOND_DEADLINE_MS = 3500;
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  it('a keep-alive stream whose body stays open keeps renewing past the deadline; a watch keeps receiving', async () => {
    const lease = (await must(roomyClient.call('Lease', 'LeaseGrant', { TTL: 60 }), 'LeaseGrant')) as { ID: string | number };
    const keepAlive = new RawClient(roomy.grpcPort);
    keepAlive.socket.write(postHead('/v3/lease/keepalive', 'Transfer-Encoding: chunked\r\n\r\n') + chunk(`{"ID":"${String(lease.ID)}"}\n`));
    const watch = new RawClient(roomy.grpcPort);
    const create = JSON.stringify({ create_request: { key: bytes('open-body').toString('base64') } });
    watch.socket.write(postHead('/v3/watch', 'Transfer-Encoding: chunked\r\n\r\n') + chunk(create));
    try {
      await eventually('first renewal and watch created', async () => (keepAlive.results() === 1 && watch.results() === 1 ? true : undefined), 10_000);
      await sleep(BEYOND_DEADLINE_MS);
      keepAlive.socket.write(chunk(`{"ID":"${String(lease.ID)}"}\n`));
      await must(roomyClient.call('KV', 'Put', { key: bytes('open-body'), value: bytes('v') }), 'Put');
      await eventually('second renewal and the event', async () => (keepAlive.results() === 2 && watch.results() === 2 ? true : undefined), 10_000);
      await sleep(BEYOND_DEADLINE_MS);
      keepAlive.socket.write(chunk(`{"ID":"${String(lease.ID)}"}\n`));
      await eventually('third renewal', async () => (keepAlive.results() === 3 ? true : undefined), 10_000);
      expect(keepAlive.socket.destroyed || watch.socket.destroyed).toBe(false);
      expect(keepAlive.text + watch.text).not.toContain('408');
      // The body's end still ends the keep-alive stream.
      keepAlive.socket.write('0\r\n\r\n');
      await eventually('keep-alive ended', async () => (keepAlive.text.endsWith('0\r\n\r\n') ? true : undefined), 10_000);
    } finally {
      keepAlive.socket.destroy();
      watch.socket.destroy();
    }
  });

  it('a dripped unary body, and a request object dripped inside a stream, are cut with 408 while gRPC keeps serving', async () => {
    const unary = new RawClient(roomy.grpcPort);
    unary.socket.write(postHead('/v3/kv/range', 'Content-Length: 1000\r\n\r\n') + '{"key":');
    const firstObject = new RawClient(roomy.grpcPort);
    firstObject.socket.write(postHead('/v3/watch', 'Transfer-Encoding: chunked\r\n\r\n') + chunk('{"create_request":'));
    // A keep-alive stream answered once, whose next request then never ends.
    const lease = (await must(roomyClient.call('Lease', 'LeaseGrant', { TTL: 60 }), 'LeaseGrant')) as { ID: string | number };
    const later = new RawClient(roomy.grpcPort);
    later.socket.write(postHead('/v3/lease/keepalive', 'Transfer-Encoding: chunked\r\n\r\n') + chunk(`{"ID":"${String(lease.ID)}"}`));
    await eventually('renewed once', async () => (later.results() === 1 ? true : undefined), 10_000);
    later.socket.write(chunk('{"ID":'));
    const drip = setInterval(() => {
      for (const client of [unary, firstObject, later]) if (!client.socket.destroyed) client.socket.write(client === unary ? ' ' : chunk(' '));
    }, 200);
    try {
      const started = Date.now();
      let calls = 0;
      while (Date.now() - started < 2000) {
        await rangeWorks(roomyClient);
        calls += 1;
      }
      expect(calls).toBeGreaterThan(0);
      await Promise.all([unary.closed, firstObject.closed, later.closed]);
    } finally {
      clearInterval(drip);
    }
    expect(unary.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(firstObject.text).toMatch(/^HTTP\/1\.1 408 /);
    // Answered before: the stream is cut, nothing more is written to it.
    expect(later.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(later.results()).toBe(1);
    expect(later.text).not.toContain('408');
    await eventually('no stream left open', async () => ((await watchStreams(roomy)) === 0 ? true : undefined), 10_000);
    await rangeWorks(roomyClient);
  });

  it('a stream that sends nothing but blanks is closed by its idle bound, and its connection with it, the body still dripping', async () => {
    const dripping = new RawClient(roomy.grpcPort);
    dripping.socket.write(postHead('/v3/lease/keepalive', 'Transfer-Encoding: chunked\r\n\r\n') + chunk(' '));
    const drip = setInterval(() => dripping.socket.writable && dripping.socket.write(chunk(' ')), 200);
    try {
      await dripping.closed;
    } finally {
      clearInterval(drip);
    }
    expect(dripping.text).toMatch(/^HTTP\/1\.1 503 /);
    expect(dripping.text.toLowerCase()).toContain('connection: close');
    expect(dripping.text).toContain('{"error":{"grpc_code":14,"http_code":503,"message":"ward: stream closed: no request within 2000 ms","http_status":"Service Unavailable"}}');
  });
});
