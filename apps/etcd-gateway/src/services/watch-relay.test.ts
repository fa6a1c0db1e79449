// The Watch relay over real gRPC: client stream → gateway → internal stream → an echoing node.
import { credentials, makeGenericClientConstructor, Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcServer, type CallContext, type GrpcServer } from '@ward/platform/grpc-server';
import { createLogger } from '@ward/platform/logging';
import { SeededRng, systemClock } from '@ward/shared/clock';
import { ClusterClient } from '../cluster/cluster-client';
import { IdentityResolver, type AuthEnabledProbe } from '../identity/identity-resolver';
import type { TokenVerifier } from '../identity/token-verifier';
import { watchRelayDefinition } from './pass-through';
import { callerOf, StreamAccounting, type CallerLimits } from './stream-accounting';
import { WatchRelay } from './watch-relay';
import { gatewayConfig } from '../config';
import { createGateway, type Gateway } from '../gateway';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';
import { enableAuthAsRoot, etcdTestClient, login, type EtcdTestClient } from '../testing/etcd-client';

type WatchResponse = { watch_id: string; created: boolean; canceled: boolean; cancel_reason: string; header: { revision: string } };

let node: ApplierNode;
let gateway: Gateway;
let etcd: EtcdTestClient;
let rootToken: string;

function openWatch(token?: string): { stream: ClientDuplexStream<object, WatchResponse>; next(): Promise<WatchResponse>; ended: Promise<unknown> } {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('token', token);
  const stream = (etcd.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, WatchResponse> }).Watch(metadata);
  const queue: WatchResponse[] = [];
  const waiters: Array<(r: WatchResponse) => void> = [];
  stream.on('data', (response: WatchResponse) => {
    const waiter = waiters.shift();
    if (waiter) waiter(response);
    else queue.push(response);
  });
  const ended = new Promise((resolve) => {
    stream.on('error', resolve);
    stream.on('end', () => resolve('end'));
  });
  return { stream, ended, next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiters.push(resolve))) };
}

const create = (key: string) => ({ create_request: { key: Buffer.from(key) } });

const silent = createLogger({ name: 'test', level: 'silent' });

const TEST_LIMITS: CallerLimits = { streamsPerConnection: 100, streamsPerUser: 100, streamsPerAddress: 100, watchersPerStream: 100, watchersPerCaller: 100 };

/** A cluster client of the node, for a relay built by hand. */
function clusterClient(): ClusterClient {
  return new ClusterClient({
    endpoints: [node.address],
    requestTimeoutMs: 5000,
    resolveTokenTimeoutMs: 1000,
    retry: { maxAttemptsCount: 3, baseDelayMs: 10, maxDelayMs: 100 },
    connection: { maxReceiveBytes: 4 * 1024 * 1024, maxSendBytes: 4 * 1024 * 1024, keepaliveTimeMs: 30_000, keepaliveTimeoutMs: 10_000 },
    clock: systemClock,
    rng: new SeededRng(1),
    logger: silent,
  });
}

/** `relay` as the Watch service of a gRPC server on loopback, and a client of it. */
async function serveRelay(relay: WatchRelay): Promise<{ server: GrpcServer; client: EtcdTestClient; address: string }> {
  const server = createGrpcServer({ host: '127.0.0.1', port: 0, maxReceiveMessageBytes: 1024 * 1024, maxSendMessageBytes: 1024 * 1024, keepaliveTimeMs: 30_000, keepaliveTimeoutMs: 10_000, maxConcurrentStreams: 100, logger: silent });
  server.addService(watchRelayDefinition(), { Watch: (call: unknown, context: CallContext) => relay.handle(call as never, context) });
  const port = await server.start();
  return { server, client: etcdTestClient(`127.0.0.1:${port}`), address: `127.0.0.1:${port}` };
}

beforeAll(async () => {
  node = await startApplierNode();
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, maxWatchStreamsCount: 3, maxStreamsPerUserCount: 2, maxStreamsPerAddressCount: 2, logLevel: 'silent' }), {
    logger: silent,
  });
  etcd = etcdTestClient(gateway.grpcAddress);
  await enableAuthAsRoot(etcd, 'pw');
  rootToken = await login(etcd, 'root', 'pw');
});

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  await node?.stop();
});

describe('Watch relay', () => {
  it('relays creates with the stream token’s identity, and the node’s answers back', async () => {
    const before = node.options.watchRequests.length;
    const watch = openWatch(rootToken);
    watch.stream.write(create('a'));
    expect(await watch.next()).toMatchObject({ watch_id: '0', created: true });
    watch.stream.write({ progress_request: {} });
    watch.stream.write(create('b'));
    expect(await watch.next()).toMatchObject({ watch_id: '1', created: true });
    const seen = node.options.watchRequests.slice(before);
    expect(seen.map((r) => [r.username, Object.keys(r.request)[0]])).toEqual([
      ['root', 'create_request'],
      ['root', 'progress_request'],
      ['root', 'create_request'],
    ]);
    expect(seen[0]!.authRevision).toBe(node.applier.authView.revision);
    watch.stream.end();
    expect(await watch.ended).toBe('end');
  });

  it('no token: creates go through anonymously (the node refuses them as etcd does)', async () => {
    const before = node.options.watchRequests.length;
    const watch = openWatch();
    watch.stream.write(create('a'));
    await watch.next();
    expect(node.options.watchRequests[before]).toMatchObject({ username: '', authRevision: 0 });
    watch.stream.cancel();
    await watch.ended;
  });

  it('an invalid token: the create is refused on the stream as etcd does, the stream stays open', async () => {
    const before = node.options.watchRequests.length;
    const watch = openWatch('garbage');
    watch.stream.write(create('a'));
    expect(await watch.next()).toMatchObject({
      watch_id: '-1',
      created: true,
      canceled: true,
      cancel_reason: 'rpc error: code = Unauthenticated desc = etcdserver: invalid auth token',
    });
    watch.stream.write({ progress_request: {} });
    watch.stream.write(create('b'));
    expect(await watch.next()).toMatchObject({ canceled: true, watch_id: '-1' });
    // Every create was refused before the member: no member stream was opened, nothing reached it.
    expect(node.options.watchRequests.slice(before)).toEqual([]);
    watch.stream.cancel();
    await watch.ended;
  });

  it('a client cancel closes the internal stream; streams are bounded per caller, and all callers together', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const baseline = node.options.watchStreamsCount;
    const watches = [openWatch(rootToken), openWatch(rootToken)];
    for (const watch of watches) {
      watch.stream.write(create('x'));
      await watch.next();
    }
    expect(node.options.watchStreamsCount).toBe(baseline + 2);
    // root is at its own bound (GATEWAY_MAX_STREAMS_PER_USER_COUNT); an anonymous caller is not.
    expect(await openWatch(rootToken).ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    const anonymous = openWatch();
    anonymous.stream.write(create('x'));
    await anonymous.next();
    watches.push(anonymous);
    expect(node.options.watchStreamsCount).toBe(baseline + 3);
    // All callers together are at GATEWAY_MAX_WATCH_STREAMS_COUNT.
    const fourth = openWatch();
    expect(await fourth.ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    for (const watch of watches) watch.stream.cancel();
    await Promise.all(watches.map((watch) => watch.ended));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(node.options.watchStreamsCount).toBe(baseline);
  });

  it('undecodable bytes end the stream with an error, and the gateway keeps serving', async () => {
    const RawWatch = makeGenericClientConstructor(
      {
        Watch: {
          path: '/etcdserverpb.Watch/Watch',
          requestStream: true,
          responseStream: true,
          requestSerialize: (bytes: Buffer) => bytes,
          requestDeserialize: (bytes: Buffer) => bytes,
          responseSerialize: (bytes: Buffer) => bytes,
          responseDeserialize: (bytes: Buffer) => bytes,
        },
      },
      'RawWatch',
    );
    const raw = new RawWatch(gateway.grpcAddress, credentials.createInsecure()) as unknown as { Watch(m: Metadata): ClientDuplexStream<Buffer, Buffer>; close(): void };
    const metadata = new Metadata();
    metadata.set('token', rootToken);
    const stream = raw.Watch(metadata);
    const ended = new Promise<{ code?: number }>((resolve) => {
      stream.on('error', resolve);
      stream.on('end', () => resolve({}));
    });
    stream.on('data', () => undefined);
    stream.write(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect((await ended).code).toBe(13);
    raw.close();
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('a') }, rootToken)).ok).toBe(true);
  });
});

describe('Watch relay: a client that cancels while the internal stream is being opened', () => {
  it('releases its slot and never leaves the internal stream open', async () => {
    const cluster = clusterClient();
    const accounting = new StreamAccounting(TEST_LIMITS);
    let opening!: () => void;
    const openingStarted = new Promise<void>((resolve) => (opening = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const relay = new WatchRelay({
      openStream: async () => {
        opening();
        await released; // the node is slow to connect
        return cluster.openWatch();
      },
      // A token-less stream: its create is anonymous, no token is ever verified.
      identities: new IdentityResolver({} as TokenVerifier, {} as AuthEnabledProbe),
      status: (signal) => cluster.status(signal),
      maxStreamsCount: 1,
      accounting,
      idleTimeoutMs: 60_000,
    });
    const { server, client } = await serveRelay(relay);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100)); // earlier tests' internal streams have closed
      const baseline = node.options.watchStreamsCount;
      const stream = (client.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, WatchResponse> }).Watch(new Metadata());
      stream.on('error', () => undefined);
      stream.on('data', () => undefined);
      // The member stream is opened by the first create, not by the client stream's opening.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(node.options.watchStreamsCount).toBe(baseline);
      stream.write(create('a'));
      await openingStarted;
      stream.cancel();
      await new Promise((resolve) => setTimeout(resolve, 200)); // the cancel reaches the server
      release();
      await new Promise((resolve) => setTimeout(resolve, 500)); // the internal stream would be open by now
      expect(relay.openStreamsCount).toBe(0);
      expect(accounting.trackedKeysCount).toBe(0);
      expect(node.options.watchStreamsCount).toBe(baseline);
    } finally {
      client.close();
      cluster.close();
      await server.stop(100);
    }
  });
});

describe('Watch relay: a member that does not keep up with a client\'s requests', () => {
  it('stops reading the client instead of buffering its requests without bound', async () => {
    const cluster = clusterClient();
    let internal: ClientDuplexStream<unknown, unknown> | undefined;
    const relay = new WatchRelay({
      openStream: async () => {
        const stream = await cluster.openWatch();
        internal = stream as unknown as ClientDuplexStream<unknown, unknown>;
        return stream;
      },
      // A token-less stream: every create is anonymous, no token is ever verified.
      identities: new IdentityResolver({} as TokenVerifier, {} as AuthEnabledProbe),
      status: (signal) => cluster.status(signal),
      maxStreamsCount: 1,
      accounting: new StreamAccounting({ ...TEST_LIMITS, watchersPerStream: 10_000, watchersPerCaller: 10_000 }),
      idleTimeoutMs: 60_000,
    });
    const { server, client } = await serveRelay(relay);
    node.options.pauseWatchReads = true;
    try {
      const stream = (client.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, WatchResponse> }).Watch(new Metadata());
      stream.on('error', () => undefined);
      stream.on('data', () => undefined);
      // 2,000 creates with a 32 KiB key each (64 MiB), sent as fast as the gateway takes them.
      const key = Buffer.alloc(32 * 1024, 0x61);
      for (let i = 0; i < 2000; i++) stream.write(create(key.toString()));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(internal).toBeDefined();
      // What the gateway holds for the member stays within a stream's high-water mark.
      expect(internal!.writableLength).toBeLessThanOrEqual(64);
      stream.cancel();
    } finally {
      node.options.pauseWatchReads = false;
      client.close();
      cluster.close();
      await server.stop(100);
    }
  });
});

describe('Watch relay: per-caller accounting on every way a stream ends', () => {
  let cluster: ClusterClient;
  let accounting: StreamAccounting;
  let relay: WatchRelay;
  let served: { server: GrpcServer; client: EtcdTestClient; address: string };

  /** A relay with its own accounting (`limits`) and idle bound. */
  async function serve(limits: Partial<CallerLimits> = {}, idleTimeoutMs = 60_000): Promise<void> {
    cluster = clusterClient();
    accounting = new StreamAccounting({ ...TEST_LIMITS, ...limits });
    relay = new WatchRelay({
      openStream: () => cluster.openWatch(),
      identities: new IdentityResolver({} as TokenVerifier, {} as AuthEnabledProbe),
      status: (signal) => cluster.status(signal),
      maxStreamsCount: 10,
      accounting,
      idleTimeoutMs,
    });
    served = await serveRelay(relay);
  }

  function open(): ReturnType<typeof openWatch> {
    const saved = etcd;
    etcd = served.client;
    try {
      return openWatch();
    } finally {
      etcd = saved;
    }
  }

  /** The relay's counts once the stream's end has reached the server. */
  async function settledCounts(): Promise<{ open: number; keys: number; internal: number }> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { open: relay.openStreamsCount, keys: accounting.trackedKeysCount, internal: node.options.watchStreamsCount };
  }

  afterEach(async () => {
    node.options.failNextWatchCreate = undefined;
    served.client.close();
    cluster.close();
    await served.server.stop(100);
  });

  it('client cancel: the slots of the stream and of its watchers are given back', async () => {
    await serve();
    const baseline = node.options.watchStreamsCount;
    const watch = open();
    watch.stream.write(create('a'));
    watch.stream.write(create('b'));
    await watch.next();
    await watch.next();
    expect(accounting.watchersOf(callerOf('127.0.0.1:0', ''))).toBe(2);
    watch.stream.cancel();
    await watch.ended;
    expect(await settledCounts()).toEqual({ open: 0, keys: 0, internal: baseline });
  });

  it('client half-close, with and without a member stream: the call ends, nothing is left counted', async () => {
    await serve();
    const baseline = node.options.watchStreamsCount;
    const withMember = open();
    withMember.stream.write(create('a'));
    await withMember.next();
    withMember.stream.end();
    const idle = open();
    idle.stream.end();
    expect(await withMember.ended).toBe('end');
    expect(await idle.ended).toBe('end');
    expect(await settledCounts()).toEqual({ open: 0, keys: 0, internal: baseline });
  });

  it('the member ends the stream with etcd’s `too many requests`: the client gets that code and text, not `unhealthy cluster`', async () => {
    await serve();
    node.options.failNextWatchCreate = { code: 8, details: 'etcdserver: too many requests' };
    const watch = open();
    watch.stream.write(create('a'));
    expect(await watch.ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    expect((await settledCounts()).keys).toBe(0);
  });

  it('the member fails with something that is not an etcd error: `unhealthy cluster`', async () => {
    await serve();
    node.options.failNextWatchCreate = { code: 13, details: 'something broke' };
    const watch = open();
    watch.stream.write(create('a'));
    expect(await watch.ended).toMatchObject({ code: 14, details: 'etcdserver: unhealthy cluster' });
    expect((await settledCounts()).keys).toBe(0);
  });

  it('a stream that creates no watcher within the idle bound is closed with UNAVAILABLE; one that did stays open', async () => {
    await serve({}, 400);
    const baseline = node.options.watchStreamsCount;
    const idle = open();
    idle.stream.write({ progress_request: {} }); // asks for nothing: still idle
    const busy = open();
    busy.stream.write(create('a'));
    await busy.next();
    expect(await idle.ended).toMatchObject({ code: 14, details: 'ward: stream closed: no request within 400 ms' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(relay.openStreamsCount).toBe(1);
    busy.stream.cancel();
    expect(await settledCounts()).toEqual({ open: 0, keys: 0, internal: baseline });
  });

  it('undecodable bytes: the stream ends with an error and gives its slots back', async () => {
    await serve();
    const RawWatch = makeGenericClientConstructor(
      { Watch: { path: '/etcdserverpb.Watch/Watch', requestStream: true, responseStream: true, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
      'RawWatch',
    );
    const raw = new RawWatch(served.address, credentials.createInsecure()) as unknown as { Watch(m: Metadata): ClientDuplexStream<Buffer, Buffer>; close(): void };
    const stream = raw.Watch(new Metadata());
    const ended = new Promise<{ code?: number }>((resolve) => stream.on('error', resolve));
    stream.on('data', () => undefined);
    stream.write(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect((await ended).code).toBe(13);
    raw.close();
    expect((await settledCounts()).keys).toBe(0);
  });

  it('watchers are bounded per stream: a create beyond is refused on the stream with `too many requests`; a cancel frees a slot', async () => {
    await serve({ watchersPerStream: 2 });
    const watch = open();
    watch.stream.write(create('a'));
    watch.stream.write(create('b'));
    watch.stream.write(create('c'));
    expect(await watch.next()).toMatchObject({ watch_id: '0', created: true, canceled: false });
    expect(await watch.next()).toMatchObject({ watch_id: '1', created: true, canceled: false });
    expect(await watch.next()).toMatchObject({
      watch_id: '-1',
      created: true,
      canceled: true,
      cancel_reason: 'rpc error: code = ResourceExhausted desc = etcdserver: too many requests',
    });
    watch.stream.write({ cancel_request: { watch_id: '0' } });
    expect(await watch.next()).toMatchObject({ watch_id: '0', canceled: true });
    watch.stream.write(create('d'));
    expect(await watch.next()).toMatchObject({ watch_id: '2', created: true, canceled: false });
    watch.stream.cancel();
    expect((await settledCounts()).keys).toBe(0);
  });
});
