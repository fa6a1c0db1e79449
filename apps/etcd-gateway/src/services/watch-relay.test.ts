// The Watch relay over real gRPC: client stream → gateway → internal stream → an echoing node.
import { credentials, makeGenericClientConstructor, Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcServer, type CallContext, type GrpcServer } from '@ward/platform/grpc-server';
import { createLogger } from '@ward/platform/logging';
import { SeededRng, systemClock } from '@ward/shared/clock';
import { ClusterClient } from '../cluster/cluster-client';
import { IdentityResolver, type AuthEnabledProbe } from '../identity/identity-resolver';
import type { TokenVerifier } from '../identity/token-verifier';
import { watchRelayDefinition } from './pass-through';
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
async function serveRelay(relay: WatchRelay): Promise<{ server: GrpcServer; client: EtcdTestClient }> {
  const server = createGrpcServer({ host: '127.0.0.1', port: 0, maxReceiveMessageBytes: 1024 * 1024, maxSendMessageBytes: 1024 * 1024, keepaliveTimeMs: 30_000, keepaliveTimeoutMs: 10_000, maxConcurrentStreams: 100, logger: silent });
  server.addService(watchRelayDefinition(), { Watch: (call: unknown, context: CallContext) => relay.handle(call as never, context) });
  const port = await server.start();
  return { server, client: etcdTestClient(`127.0.0.1:${port}`) };
}

beforeAll(async () => {
  node = await startApplierNode();
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, maxWatchStreamsCount: 3, logLevel: 'silent' }), {
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
    expect(node.options.watchRequests.slice(before).map((r) => Object.keys(r.request)[0])).toEqual(['progress_request']);
    watch.stream.cancel();
    await watch.ended;
  });

  it('a client cancel closes the internal stream; the number of streams is bounded', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const baseline = node.options.watchStreamsCount;
    const watches = [openWatch(rootToken), openWatch(rootToken), openWatch(rootToken)];
    for (const watch of watches) {
      watch.stream.write(create('x'));
      await watch.next();
    }
    expect(node.options.watchStreamsCount).toBe(baseline + 3);
    const fourth = openWatch(rootToken);
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
      identities: {} as IdentityResolver, // no create is sent: never consulted
      status: (signal) => cluster.status(signal),
      maxStreamsCount: 1,
    });
    const { server, client } = await serveRelay(relay);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100)); // earlier tests' internal streams have closed
      const baseline = node.options.watchStreamsCount;
      const stream = (client.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, WatchResponse> }).Watch(new Metadata());
      stream.on('error', () => undefined);
      stream.on('data', () => undefined);
      await openingStarted;
      stream.cancel();
      await new Promise((resolve) => setTimeout(resolve, 200)); // the cancel reaches the server
      release();
      await new Promise((resolve) => setTimeout(resolve, 500)); // the internal stream would be open by now
      expect(relay.openStreamsCount).toBe(0);
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
