import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { PeerTransport, startPeerServer, type PeerTransportOptions, type PeerServer } from '@ward/raft/transport';
import { startNetProxy, type NetProxy } from '../src/index';

/**
 * The proxy between two Raft peer transports, as the cluster fault tests will use it:
 * member 1 reaches member 2 only through the proxy.
 */
interface TestMember {
  readonly transport: PeerTransport;
  readonly server: PeerServer;
  readonly port: number;
  readonly received: { message: Uint8Array }[];
  close(): Promise<void>;
}

const logger = createLogger({ name: 'net-proxy-test', level: 'silent' });

async function startMember(id: bigint, options: Partial<PeerTransportOptions> = {}): Promise<TestMember> {
  const received: { message: Uint8Array }[] = [];
  const transport = new PeerTransport({
    backoff: { initialMs: 20, maxMs: 200 },
    connectTimeoutMs: 500,
    ...options,
    localId: id,
    receiver: { onMessages: (_from, messages) => void received.push(...messages.map((m) => ({ message: m }))) },
  });
  const { server, port } = await startPeerServer(transport, { host: '127.0.0.1', port: 0, logger });
  return { transport, server, port, received, close: async () => (await transport.close(), await server.stop(100)) };
}

function message(i: number, sizeBytes = 16): Uint8Array {
  const bytes = new Uint8Array(sizeBytes);
  new DataView(bytes.buffer).setUint32(0, i, true);
  return bytes;
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const startedMs = performance.now();
  while (!condition()) {
    if (performance.now() - startedMs > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const members: TestMember[] = [];
const proxies: NetProxy[] = [];
afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.close()));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

describe('PeerTransport through the fault-injecting proxy', () => {
  it('recovers from a partition: blackholed traffic is lost, and after heal the stream reconnects', async () => {
    const a = await startMember(1n, { limits: { maxQueuedMessages: 200 }, keepalive: { timeMs: 500, timeoutMs: 500 } });
    const b = await startMember(2n);
    members.push(a, b);
    const proxy = await startNetProxy({ targetHost: '127.0.0.1', targetPort: b.port });
    proxies.push(proxy);
    a.transport.setPeer(2n, `127.0.0.1:${proxy.port}`);
    a.transport.send(2n, message(0));
    await waitFor(() => b.received.length === 1, 5000, 'delivery through the proxy');

    proxy.setFault('both', { kind: 'blackhole' });
    for (let i = 1; i <= 1000; i++) a.transport.send(2n, message(i, 512));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(b.received.length).toBe(1);
    expect(proxy.stats().forward.droppedBytes).toBeGreaterThan(0);

    proxy.heal();
    let next = 2000;
    await waitFor(
      () => {
        a.transport.send(2n, message(next++));
        return b.received.some((r) => new DataView(r.message.buffer, r.message.byteOffset).getUint32(0, true) >= 2000);
      },
      10_000,
      'delivery after heal',
    );
    expect(a.transport.stats().peers[0]!.reconnects).toBeGreaterThan(0);
  });

  it('a delayed link delays delivery but loses nothing', async () => {
    const a = await startMember(1n);
    const b = await startMember(2n);
    members.push(a, b);
    const proxy = await startNetProxy({ targetHost: '127.0.0.1', targetPort: b.port });
    proxies.push(proxy);
    a.transport.setPeer(2n, `127.0.0.1:${proxy.port}`);
    a.transport.send(2n, message(0));
    await waitFor(() => b.received.length === 1, 5000, 'first delivery');
    proxy.setFault('forward', { kind: 'delay', delayMs: 150 });
    const startedMs = performance.now();
    for (let i = 1; i <= 100; i++) a.transport.send(2n, message(i));
    await waitFor(() => b.received.length === 101, 5000, 'delayed delivery');
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(150);
  });
});
