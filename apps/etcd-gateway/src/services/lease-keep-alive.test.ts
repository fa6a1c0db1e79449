// The LeaseKeepAlive stream over real gRPC in front of an in-process node: the number of streams is
// bounded, and an error (here an invalid token) ends the stream with etcd's status.
import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from '../config';
import { createGateway, type Gateway } from '../gateway';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';
import { enableAuthAsRoot, etcdTestClient, login, must, type EtcdTestClient } from '../testing/etcd-client';

let node: ApplierNode;
let gateway: Gateway;
let etcd: EtcdTestClient;
let rootToken: string;
let bobToken: string;

function openKeepAlive(token?: string): { stream: ClientDuplexStream<object, object>; ended: Promise<unknown> } {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('token', token);
  const stream = (etcd.client('Lease') as unknown as { LeaseKeepAlive(m: Metadata): ClientDuplexStream<object, object> }).LeaseKeepAlive(metadata);
  const ended = new Promise((resolve) => {
    stream.on('error', resolve);
    stream.on('end', () => resolve('end'));
  });
  return { stream, ended };
}

beforeAll(async () => {
  node = await startApplierNode();
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, maxKeepAliveStreamsCount: 2, maxStreamsPerUserCount: 1, maxStreamsPerAddressCount: 1, streamIdleTimeoutMs: 500, logLevel: 'silent' }), {
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  etcd = etcdTestClient(gateway.grpcAddress);
  await must(etcd.call('Auth', 'UserAdd', { name: 'bob', password: 'bob-pw' }), 'UserAdd bob');
  await enableAuthAsRoot(etcd, 'pw');
  rootToken = await login(etcd, 'root', 'pw');
  bobToken = await login(etcd, 'bob', 'bob-pw');
});

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  await node?.stop();
});

describe('LeaseKeepAlive stream', () => {
  it('is bounded per caller, then for all callers: streams beyond get `too many requests`', async () => {
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
    const anonymous = openKeepAlive();
    await settle();
    // This address's anonymous bound (GATEWAY_MAX_STREAMS_PER_ADDRESS_COUNT = 1).
    expect(await openKeepAlive().ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    const root = openKeepAlive(rootToken);
    await settle();
    // root's own bound (GATEWAY_MAX_STREAMS_PER_USER_COUNT = 1).
    expect(await openKeepAlive(rootToken).ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    // bob is within his, but all callers together are at GATEWAY_MAX_KEEP_ALIVE_STREAMS_COUNT = 2.
    expect(await openKeepAlive(bobToken).ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    root.stream.cancel();
    await root.ended;
    await settle();
    // A slot given back is free again: bob's stream is admitted (and, sending nothing, idles out).
    expect(await openKeepAlive(bobToken).ended).toMatchObject({ code: 14, details: 'ward: stream closed: no request within 500 ms' });
    expect(await anonymous.ended).toMatchObject({ code: 14 });
  });

  it('a stream that renews nothing within GATEWAY_STREAM_IDLE_TIMEOUT_MS is closed with UNAVAILABLE, and its slot is free again', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const idle = openKeepAlive();
    expect(await idle.ended).toMatchObject({ code: 14, details: 'ward: stream closed: no request within 500 ms' });
    // Admitted (this address's one anonymous slot is free again): its renewal reaches the node,
    // which here implements no lessor (a refused stream would get `too many requests` instead).
    const next = openKeepAlive();
    next.stream.write({ ID: '1' });
    expect(await next.ended).toMatchObject({ code: 14, details: 'etcdserver: unhealthy cluster' });
  });

  it('a renewal with an invalid token ends the stream with `invalid auth token`', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stream = openKeepAlive('garbage.1');
    stream.stream.write({ ID: '1' });
    expect(await stream.ended).toMatchObject({ code: 16, details: 'etcdserver: invalid auth token' });
  });
});
