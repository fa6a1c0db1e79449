import { afterEach, describe, expect, it } from 'vitest';
import { indexOf, message, startMember, waitFor, type TestMember } from './helpers';
import type { DropReason } from '../src/index';

const members: TestMember[] = [];
afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.close()));
});

// The stalled-receiver case sends enough that its overflow must be dropped: more than the stalled
// connection holds (gRPC: its HTTP/2 flow-control windows; the frame stream: the kernel's socket
// buffers, a few MiB on loopback) plus the sender's queue.
describe.each([
  { link: 'the frame stream', frameStream: true, floodMessageBytes: 4096 },
  { link: "gRPC's Send stream", frameStream: false, floodMessageBytes: 1024 },
])('PeerTransport over loopback, messages on $link', ({ frameStream, floodMessageBytes }) => {
  /** Sends `from` messages numbered from `first`, one per poll, until `to` holds `count` in all. */
  async function sendUntilReceived(from: TestMember, to: TestMember, first: number, count: number, what: string): Promise<void> {
    let i = first;
    await waitFor(
      () => {
        from.transport.send(to.id, message(i++));
        return to.received.length >= count;
      },
      10_000,
      what,
    );
  }

  async function member(id: bigint, options: Parameters<typeof startMember>[1] = {}): Promise<TestMember> {
    const started = await startMember(id, { frameStream, ...options });
    members.push(started);
    return started;
  }

  it('delivers messages in order with their bytes intact, tagged with the sender', async () => {
    const a = await member(1n);
    const b = await member(2n);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 2000; i++) expect(a.transport.send(2n, message(i, 4 + (i % 300)))).toBe(true);
    await waitFor(() => b.received.length === 2000, 10_000, '2000 messages');
    b.received.forEach((r, i) => {
      expect(r.from).toBe(1n);
      expect(r.message).toEqual(message(i, 4 + (i % 300)));
    });
  });

  it('batches: messages sent in one turn travel in a few frames', async () => {
    const a = await member(1n, { limits: { maxBatchMessages: 256 } });
    const b = await member(2n);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 1024; i++) a.transport.send(2n, message(i));
    await waitFor(() => b.received.length === 1024, 10_000, '1024 messages');
    const peer = a.transport.stats().peers[0]!;
    expect(peer.sentMessages).toBe(1024);
    expect(peer.sentBatches).toBe(4);
    expect(b.transport.stats().received.receivedBatches).toBe(4);
  });

  it('a stalled receiver does not delay delivery to another peer; its overflow is dropped and counted', async () => {
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    let stalledBatches = 0;
    // The queue bound gives the fast peer room for a busy machine's hiccups (a starved sender fell
    // 1,000 messages behind once); no message ages out here (maxQueuedAgeMs has its own test).
    const a = await member(1n, { limits: { maxQueuedMessages: 5000, maxBatchMessages: 64, maxQueuedAgeMs: 60_000 } });
    const slow = await member(2n, {
      receiver: {
        onMessages: () => {
          stalledBatches++;
          return stalled;
        },
      },
    });
    const fast = await member(3n);
    a.transport.setPeer(2n, `127.0.0.1:${slow.port}`);
    a.transport.setPeer(3n, `127.0.0.1:${fast.port}`);
    // 20,000 messages to each peer, 100 per round, a round every few ms.
    const total = 20_000;
    const perRound = 100;
    let sendingMs = 0;
    for (let round = 0; round < total / perRound; round++) {
      for (let i = round * perRound; i < (round + 1) * perRound; i++) {
        const startedMs = performance.now();
        a.transport.send(2n, message(i, floodMessageBytes));
        a.transport.send(3n, message(i, floodMessageBytes));
        sendingMs += performance.now() - startedMs;
      }
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const lastSentMs = performance.now();
    await waitFor(() => fast.received.length === total, 10_000, 'all messages at the fast peer');
    const catchUpMs = performance.now() - lastSentMs;
    // The stalled peer is never released before this point: a transport where it held up the
    // others would time out above. The bound here is loose because the test machine is shared.
    expect(catchUpMs).toBeLessThan(5000);
    expect(fast.received.map((r) => indexOf(r.message))).toEqual(Array.from({ length: total }, (_, i) => i));
    // send() is synchronous and cheap whatever the peer does: 40,000 calls in well under 4 s.
    expect(sendingMs).toBeLessThan(4000);
    const stats = a.transport.stats().peers.find((p) => p.peer === 2n)!;
    expect(stats.droppedQueueFull).toBeGreaterThan(total / 2);
    expect(stats.queuedMessages).toBeLessThanOrEqual(5000);
    expect(stalledBatches).toBe(1);
    expect(a.transport.stats().peers.find((p) => p.peer === 3n)!.droppedMessages).toBe(0);
    release();
  });

  it('drops beyond the bounded queue for an unreachable peer, counts by reason, and reports the peer unreachable', async () => {
    const dropped: Record<string, number> = {};
    const unreachable: bigint[] = [];
    const a = await member(1n, {
      limits: { maxQueuedMessages: 10, maxMessageBytes: 2048, maxQueuedBytes: 1 << 20 },
      hooks: {
        onDropped: (_peer, count, reason: DropReason) => (dropped[reason] = (dropped[reason] ?? 0) + count),
        onUnreachable: (peer) => unreachable.push(peer),
      },
    });
    a.transport.setPeer(2n, '127.0.0.1:1');
    for (let i = 0; i < 100; i++) a.transport.send(2n, message(i));
    expect(a.transport.send(2n, new Uint8Array(4096))).toBe(false);
    expect(a.transport.send(9n, message(0))).toBe(false);
    const stats = a.transport.stats().peers[0]!;
    expect(stats.queuedMessages).toBe(10);
    expect(stats.droppedQueueFull).toBe(90);
    expect(stats.droppedTooLarge).toBe(1);
    expect(dropped).toEqual({ 'queue-full': 90, 'too-large': 1, 'unknown-peer': 1 });
    await waitFor(() => unreachable.length > 0, 5000, 'an unreachable report');
    expect(unreachable[0]).toBe(2n);
  });

  it('a peer back after an outage gets no backlog: messages older than maxQueuedAgeMs are dropped and counted, fresh ones delivered', async () => {
    const dropped: Record<string, number> = {};
    const a = await member(1n, {
      limits: { maxQueuedAgeMs: 300 },
      backoff: { initialMs: 50, maxMs: 50 },
      hooks: { onDropped: (_peer, count, reason: DropReason) => (dropped[reason] = (dropped[reason] ?? 0) + count) },
    });
    const b = await member(2n);
    await b.server.stop(0);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 5; i++) expect(a.transport.send(2n, message(i))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(a.transport.stats().peers[0]!.queuedMessages).toBe(5);
    await b.restart();
    await sendUntilReceived(a, b, 100, 1, 'delivery once the peer is back');
    expect(b.received.every((r) => indexOf(r.message) >= 100)).toBe(true);
    expect(dropped['expired']).toBeGreaterThanOrEqual(5);
    expect(a.transport.stats().peers[0]!.droppedExpired).toBe(dropped['expired']);
  });

  it('reconnects with backoff after the receiver restarts on the same port', async () => {
    const reconnects: number[] = [];
    const a = await member(1n, { hooks: { onReconnect: (_peer, attempt) => reconnects.push(attempt) } });
    const b = await member(2n);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.transport.send(2n, message(1));
    await waitFor(() => b.received.length === 1, 5000, 'first message');
    await b.server.stop(0);
    await waitFor(() => a.transport.stats().peers[0]!.connected === false, 5000, 'the stream to notice the stop');
    await b.restart();
    // Keep sending: messages queued while down, or sent after the reconnect, arrive.
    await sendUntilReceived(a, b, 2, 2, 'delivery after the restart');
    expect(reconnects.length).toBeGreaterThan(0);
    expect(a.transport.stats().peers[0]!.reconnects).toBe(reconnects.length);
    expect(a.transport.stats().peers[0]!.connected).toBe(true);
  });

  it('counts messages and bytes through the hooks on both sides', async () => {
    const sent = { messages: 0, bytes: 0 };
    const received = { messages: 0, bytes: 0 };
    const a = await member(1n, { hooks: { onSent: (_p, m, b) => ((sent.messages += m), (sent.bytes += b)) } });
    const b = await member(2n, { hooks: { onReceived: (_p, m, bytes) => ((received.messages += m), (received.bytes += bytes)) } });
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 300; i++) a.transport.send(2n, message(i, 100));
    await waitFor(() => received.messages === 300, 5000, '300 messages');
    expect(sent).toEqual(received);
    expect(a.transport.stats().peers[0]!.sentBytes).toBe(sent.bytes);
  });
});

// On the frame stream only: over gRPC's Send, the channel keeps a backoff of its own.
describe('PeerTransport at start, on the frame stream', () => {
  it('dials a peer before any message (dialAll); a stream waiting out its backoff is retried once the peer is heard from', async () => {
    const unreachable: bigint[] = [];
    // A backoff far longer than the test waits: only the peer being heard from can cut it short.
    const a = await startMember(1n, { frameStream: true, backoff: { initialMs: 20_000, maxMs: 20_000 }, hooks: { onUnreachable: (peer) => unreachable.push(peer) } });
    const b = await startMember(2n, { frameStream: true });
    members.push(a, b);
    await b.server.stop(0); // b is not listening yet
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.transport.dialAll();
    await waitFor(() => unreachable.length > 0, 5000, 'the first dial to fail');
    expect(a.transport.stats().peers[0]!.connected).toBe(false);
    await b.restart();
    b.transport.setPeer(1n, `127.0.0.1:${a.port}`);
    b.transport.dialAll();
    await waitFor(() => b.transport.stats().peers[0]!.connected, 5000, "b's stream to a");
    expect(a.received).toEqual([]); // dialled, nothing sent
    expect(a.transport.stats().peers[0]!.connected).toBe(false); // still waiting out its backoff
    b.transport.send(1n, message(1));
    await waitFor(() => a.transport.stats().peers[0]!.connected, 5000, "a's stream to b, retried when b was heard from");
    expect(a.transport.stats().peers[0]!.reconnects).toBe(1);
    a.transport.send(2n, message(2));
    await waitFor(() => b.received.length === 1, 5000, 'a message on the retried stream');
  });
});
