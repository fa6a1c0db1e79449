// The LeaseKeepAlive stream over real gRPC in front of an in-process node: the number of streams is
// bounded, and an error (here an invalid token) ends the stream with etcd's status.
import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from '../config';
import { createGateway, type Gateway } from '../gateway';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';
import { enableAuthAsRoot, etcdTestClient, type EtcdTestClient } from '../testing/etcd-client';

let node: ApplierNode;
let gateway: Gateway;
let etcd: EtcdTestClient;

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
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, maxKeepAliveStreamsCount: 1, logLevel: 'silent' }), {
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  etcd = etcdTestClient(gateway.grpcAddress);
  await enableAuthAsRoot(etcd, 'pw');
});

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  await node?.stop();
});

describe('LeaseKeepAlive stream', () => {
  it('is bounded: a stream beyond GATEWAY_MAX_KEEP_ALIVE_STREAMS_COUNT gets `too many requests`', async () => {
    const first = openKeepAlive();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = openKeepAlive();
    expect(await second.ended).toMatchObject({ code: 8, details: 'etcdserver: too many requests' });
    first.stream.cancel();
    await first.ended;
  });

  it('a renewal with an invalid token ends the stream with `invalid auth token`', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stream = openKeepAlive('garbage.1');
    stream.stream.write({ ID: '1' });
    expect(await stream.ended).toMatchObject({ code: 16, details: 'etcdserver: invalid auth token' });
  });
});
