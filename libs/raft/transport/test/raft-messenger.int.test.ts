import { afterEach, describe, expect, it } from 'vitest';
import { MessageType, encodeMessage, message, votersConfState, type Entry, type Message } from '@ward/raft/core';
import { RaftMessenger, startPeerServer, type MessageBytes, type RaftMessengerOptions, type PeerServer } from '../src/index';
import { silentLogger, waitFor } from './helpers';

interface Node {
  readonly messenger: RaftMessenger;
  readonly server: PeerServer;
  readonly port: number;
  readonly inbox: Message[];
  readonly snapshotStatus: [bigint, boolean][];
  readonly invalid: string[];
}

const nodes: Node[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) {
    await node.messenger.close();
    await node.server.stop(100);
  }
});

async function startNode(id: bigint, extra: Partial<RaftMessengerOptions> = {}): Promise<Node> {
  const inbox: Message[] = [];
  const snapshotStatus: [bigint, boolean][] = [];
  const invalid: string[] = [];
  const messenger = new RaftMessenger({
    localId: id,
    backoff: { initialMs: 20, maxMs: 200 },
    onMessage: (m) => inbox.push(m),
    onSnapshotStatus: (to, ok) => snapshotStatus.push([to, ok]),
    onInvalidMessage: (_from, reason) => invalid.push(reason),
    ...extra,
  });
  const { server, port } = await startPeerServer(messenger.transport, { host: '127.0.0.1', port: 0, logger: silentLogger });
  const node = { messenger, server, port, inbox, snapshotStatus, invalid };
  nodes.push(node);
  return node;
}

describe('RaftMessenger', () => {
  it('carries core messages between members, decoded equal to what was sent', async () => {
    const a = await startNode(0xa1n);
    const b = await startNode(0xb2n);
    a.messenger.transport.setPeer(0xb2n, `127.0.0.1:${b.port}`);
    const sent: Message[] = [
      message(MessageType.App, {
        from: 0xa1n,
        to: 0xb2n,
        term: 3,
        logTerm: 2,
        index: 10,
        commit: 9,
        entries: [
          { term: 3, index: 11, type: 0, data: new TextEncoder().encode('put a 1') },
          { term: 3, index: 12, type: 0, data: new Uint8Array(0) },
        ],
      }),
      message(MessageType.Heartbeat, { from: 0xa1n, to: 0xb2n, term: 3, commit: 12, context: Uint8Array.of(1, 2) }),
      message(MessageType.Vote, { from: 0xa1n, to: 0xb2n, term: 4, logTerm: 3, index: 12 }),
    ];
    a.messenger.send(sent);
    await waitFor(() => b.inbox.length === 3, 5000, 'three messages');
    expect(b.inbox).toEqual(sent);
  });

  it('sends large entry data uncopied, the same bytes to every follower, and each follower gets it whole', async () => {
    const [a, b, c] = [await startNode(1n), await startNode(2n), await startNode(3n)];
    a.messenger.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.messenger.transport.setPeer(3n, `127.0.0.1:${c.port}`);
    const entry = (index: number, size: number): Entry => ({ term: 2, index, type: 0, data: new Uint8Array(size).fill(index) });
    const entries = [entry(5, 9000), entry(6, 10), entry(7, 5000)];
    const app = (to: bigint): Message => message(MessageType.App, { from: 1n, to, term: 2, logTerm: 2, index: 4, commit: 4, entries });
    const queued: MessageBytes[] = [];
    const send = a.messenger.transport.send.bind(a.messenger.transport);
    a.messenger.transport.send = (to, bytes) => {
      queued.push(bytes);
      return send(to, bytes);
    };
    a.messenger.send([app(2n), app(3n)]);
    await waitFor(() => b.inbox.length === 1 && c.inbox.length === 1, 5000, 'the appends');
    expect([...b.inbox, ...c.inbox]).toEqual([app(2n), app(3n)]);
    for (const bytes of queued) {
      const pieces = bytes as readonly Uint8Array[];
      expect(pieces.filter((piece) => entries.some((e) => e.data === piece))).toEqual([entries[0]!.data, entries[2]!.data]);
    }
  });

  it('sends MsgSnap on the snapshot stream and reports the outcome', async () => {
    const a = await startNode(1n);
    const b = await startNode(2n);
    a.messenger.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const data = Uint8Array.from({ length: 5 * 1024 * 1024 + 3 }, (_, i) => (i * 7) & 0xff);
    const snap = message(MessageType.Snap, {
      from: 1n,
      to: 2n,
      term: 5,
      snapshot: { data, metadata: { index: 1000, term: 5, confState: votersConfState([1n, 2n, 3n]) } },
    });
    a.messenger.send([snap]);
    await waitFor(() => a.snapshotStatus.length === 1, 10_000, 'the snapshot status');
    expect(a.snapshotStatus).toEqual([[2n, true]]);
    expect(b.inbox).toHaveLength(1);
    expect(b.inbox[0]!.snapshot!.metadata).toEqual(snap.snapshot!.metadata);
    expect(Buffer.compare(Buffer.from(b.inbox[0]!.snapshot!.data), Buffer.from(data))).toBe(0);
    expect(b.messenger.transport.stats().received.snapshotChunksReceived).toBe(6);
    // A snapshot to a member that is not there fails, and says so.
    a.messenger.transport.setPeer(3n, '127.0.0.1:1');
    a.messenger.send([message(MessageType.Snap, { ...snap, to: 3n })]);
    await waitFor(() => a.snapshotStatus.length === 2, 10_000, 'the failed snapshot status');
    expect(a.snapshotStatus[1]).toEqual([3n, false]);
  });

  it('sends a MsgSnap whose data the storage keeps elsewhere from its snapshotData source, and reports a failing source', async () => {
    const stored = Uint8Array.from({ length: 3 * 1024 * 1024 + 5 }, (_, i) => (i * 13) & 0xff);
    let failing = false;
    async function* pieces(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < stored.length; offset += 700_000) yield stored.subarray(offset, offset + 700_000);
    }
    const a = await startNode(1n, {
      snapshotData: async (snapshot) => {
        if (failing) throw new Error('snapshot file gone');
        expect(snapshot.data.length).toBe(0);
        return { totalBytes: stored.length, data: pieces() };
      },
    });
    const b = await startNode(2n);
    a.messenger.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const snap = message(MessageType.Snap, { from: 1n, to: 2n, term: 5, snapshot: { data: new Uint8Array(0), metadata: { index: 700, term: 5, confState: votersConfState([1n, 2n]) } } });
    a.messenger.send([snap]);
    await waitFor(() => a.snapshotStatus.length === 1, 10_000, 'the snapshot status');
    expect(a.snapshotStatus).toEqual([[2n, true]]);
    expect(b.inbox[0]!.snapshot!.metadata).toEqual(snap.snapshot!.metadata);
    expect(Buffer.from(b.inbox[0]!.snapshot!.data).equals(Buffer.from(stored))).toBe(true);
    failing = true;
    a.messenger.send([snap]);
    await waitFor(() => a.snapshotStatus.length === 2, 10_000, 'the failed snapshot status');
    expect(a.snapshotStatus[1]).toEqual([2n, false]);
    expect(b.inbox).toHaveLength(1);
  });

  it('drops undecodable and misaddressed messages without delivering them', async () => {
    const a = await startNode(1n);
    const b = await startNode(2n);
    a.messenger.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.messenger.transport.send(2n, Uint8Array.of(1, 2, 3));
    a.messenger.transport.send(2n, encodeMessage(message(MessageType.Heartbeat, { from: 9n, to: 2n, term: 1 })));
    a.messenger.transport.send(2n, encodeMessage(message(MessageType.Heartbeat, { from: 1n, to: 5n, term: 1 })));
    a.messenger.send([message(MessageType.Heartbeat, { from: 1n, to: 2n, term: 1 })]);
    await waitFor(() => b.inbox.length === 1, 5000, 'the one good message');
    expect(b.invalid).toHaveLength(3);
    expect(b.inbox[0]!.type).toBe(MessageType.Heartbeat);
  });

  it('reports an unreachable peer for RawNode.reportUnreachable', async () => {
    const unreachable: bigint[] = [];
    const a = await startNode(1n, { onUnreachable: (to) => unreachable.push(to), connectTimeoutMs: 200 });
    a.messenger.transport.setPeer(7n, '127.0.0.1:1');
    a.messenger.send([message(MessageType.Heartbeat, { from: 1n, to: 7n, term: 1 })]);
    await waitFor(() => unreachable.length > 0, 5000, 'an unreachable report');
    expect(unreachable[0]).toBe(7n);
  });
});
