// Per-caller in-flight bounds: the bound itself, and through a real gateway in front of an applier
// node whose proposals are held: one caller at its bound gets `too many requests` at once, while
// another caller (and the same caller once its requests are answered) is served.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from '../config';
import { createGateway, type Gateway } from '../gateway';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';
import { etcdTestClient, type EtcdTestClient } from '../testing/etcd-client';
import { InFlightBounds } from './in-flight';

describe('InFlightBounds', () => {
  it('bounds users and anonymous addresses separately, and forgets callers with nothing in flight', () => {
    const bounds = new InFlightBounds({ perUser: 2, perAddress: 1 });
    const a1 = bounds.take('alice', '10.0.0.1');
    const a2 = bounds.take('alice', '10.0.0.2');
    expect([a1, a2]).toEqual(['user:alice', 'user:alice']);
    expect(bounds.take('alice', '10.0.0.3')).toBeUndefined();
    expect(bounds.take('bob', '10.0.0.1')).toBe('user:bob');
    expect(bounds.take('', '10.0.0.1')).toBe('address:10.0.0.1');
    expect(bounds.take('', '10.0.0.1')).toBeUndefined();
    expect(bounds.take('', '10.0.0.9')).toBe('address:10.0.0.9');
    bounds.give(a1!);
    expect(bounds.take('alice', '10.0.0.3')).toBe('user:alice');
    for (const key of ['user:alice', 'user:alice', 'user:bob', 'address:10.0.0.1', 'address:10.0.0.9']) bounds.give(key);
    expect(bounds.trackedCallersCount).toBe(0);
  });

  it('refuses a bound below 1', () => {
    expect(() => new InFlightBounds({ perUser: 0, perAddress: 1 })).toThrow(TypeError);
  });
});

describe('in-flight bounds through the gateway', () => {
  let node: ApplierNode | undefined;
  let gateway: Gateway | undefined;
  const clients: EtcdTestClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await gateway?.stop();
    await node?.stop();
  });

  it('an anonymous address at its bound gets `too many requests` at once; its slots come back when answered', async () => {
    const held: Array<() => void> = [];
    node = await startApplierNode({ onPropose: (request) => (request.operation.type === 'put' && Buffer.from(request.operation.request.key).toString() === 'held' ? new Promise<void>((resolve) => held.push(resolve)) : undefined) });
    gateway = await createGateway(
      gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, logLevel: 'silent', maxInFlightPerAddressCount: 3, maxInFlightPerUserCount: 3 }),
      { logger: createLogger({ name: 'test', level: 'silent' }) },
    );
    const client = etcdTestClient(gateway.grpcAddress);
    clients.push(client);
    const put = (key: string) => client.call('KV', 'Put', { key: Buffer.from(key), value: Buffer.from('v') });
    const pending = [put('held'), put('held'), put('held')];
    while (held.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await put('more')).toMatchObject({ ok: false, code: 8, details: 'etcdserver: too many requests' });
    expect(node.options.proposals.filter((p) => p.operation.type === 'put' && Buffer.from(p.operation.request.key).toString() === 'more')).toHaveLength(0);
    for (const release of held) release();
    expect((await Promise.all(pending)).every((answer) => answer.ok)).toBe(true);
    expect(await put('after')).toMatchObject({ ok: true });
  });
});
