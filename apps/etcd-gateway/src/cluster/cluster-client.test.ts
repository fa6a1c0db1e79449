// The cluster client over real gRPC against applier nodes playing leader, follower, dead and
// hanging members: leader hints are followed, writes are never sent twice when their outcome is
// unknown, reads are retried, every loop is bounded.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { SeededRng, systemClock, type Rng } from '@ward/shared/clock';
import { encodeApplyRequest, toPasswordHash, type ApplyOperation } from '@ward/etcd/apply';
import { isWireError } from '@ward/etcd/wire-errors';
import { startApplierNode, type ApplierNode } from '../testing/applier-node';
import { ClusterClient } from './cluster-client';

const nodes: ApplierNode[] = [];
const clients: ClusterClient[] = [];
const silentServers: Server[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(nodes.splice(0).map((node) => node.stop()));
  for (const server of silentServers.splice(0)) server.close();
});

async function node(options: Parameters<typeof startApplierNode>[0] = {}): Promise<ApplierNode> {
  const started = await startApplierNode(options);
  nodes.push(started);
  return started;
}

/**
 * A member whose host went silent as a killed container's does: its port takes connections and
 * never answers (no HTTP/2 settings), so a gRPC channel to it stays connecting.
 */
async function silentMember(): Promise<string> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  silentServers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('silent member: no port');
  return `127.0.0.1:${address.port}`;
}

function client(endpoints: string[], overrides: { requestTimeoutMs?: number; maxAttemptsCount?: number; retryDelayMs?: number; rng?: Rng } = {}): ClusterClient {
  const created = new ClusterClient({
    endpoints,
    requestTimeoutMs: overrides.requestTimeoutMs ?? 5000,
    resolveTokenTimeoutMs: 1000,
    retry: { maxAttemptsCount: overrides.maxAttemptsCount ?? 6, baseDelayMs: overrides.retryDelayMs ?? 5, maxDelayMs: overrides.retryDelayMs ?? 50 },
    connection: { maxReceiveBytes: 16 * 1024 * 1024, maxSendBytes: 4 * 1024 * 1024, keepaliveTimeMs: 30_000, keepaliveTimeoutMs: 10_000 },
    clock: systemClock,
    rng: overrides.rng ?? new SeededRng(3),
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  clients.push(created);
  return created;
}

let nextId = 1n;
function entry(operation: ApplyOperation): Uint8Array {
  return encodeApplyRequest({ header: { id: nextId++, username: '', authRevision: 0 }, operation });
}

const put = (key: string): Uint8Array => entry({ type: 'put', request: { key: Buffer.from(key), value: Buffer.from('v') } });
const range = (key: string): Uint8Array => entry({ type: 'range', request: { key: Buffer.from(key) } });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'succeeded',
    (error: unknown) => error,
  );
}

describe('ClusterClient', () => {
  it('asks AuthCheck on the Exchange stream; a member that predates that call gets the unary AuthCheck, from then on', async () => {
    const current = await node();
    const older = await node({ exchangeWithoutAuthCheck: true });
    const operations: ApplyOperation[] = [
      { type: 'userAdd', request: { name: 'root', passwordHash: toPasswordHash(new TextEncoder().encode('$2b$10$C6UzMDM.H6dfI/f/IKxGhu8ATXq6Yn3ML9bL1rJ6GyqW3G1P4WgD6')), noPassword: false } },
      { type: 'userGrantRole', request: { user: 'root', role: 'root' } },
      { type: 'userAdd', request: { name: 'bot', passwordHash: null, noPassword: true } },
      { type: 'authEnable' },
    ];
    for (const member of [current, older]) {
      operations.forEach((operation, index) => member.applier.apply(index + 1, { header: { id: BigInt(index + 1), username: '', authRevision: 0 }, operation }));
    }
    for (const [member, viaExchange, viaUnary] of [[current, 2, 0], [older, 1, 2]] as const) {
      const cluster = client([member.address]);
      const bot = await cluster.authCheck('bot');
      const nobody = await cluster.authCheck('nobody');
      const revision = member.applier.authView.revision;
      expect([bot.auth_enabled, bot.user_exists, bot.no_password, Number(bot.auth_revision)]).toEqual([true, true, true, revision]);
      expect([nobody.auth_enabled, nobody.user_exists, Number(nobody.auth_revision)]).toEqual([true, false, revision]);
      expect(member.options.calls['Exchange/AuthCheck'] ?? 0).toBe(viaExchange);
      expect(member.options.calls['AuthCheck'] ?? 0).toBe(viaUnary);
    }
  });

  it('follows a NotLeader hint at once, then goes straight to the leader', async () => {
    const leader = await node();
    const follower = await node({ notLeader: leader.address });
    const cluster = client([follower.address, leader.address]);
    await cluster.propose(put('a'));
    await cluster.propose(put('b'));
    expect(follower.options.calls['Propose']).toBe(1);
    expect(leader.options.proposals.map((p) => p.operation.type)).toEqual(['put', 'put']);
    expect(cluster.currentTarget).toBe(leader.address);
  });

  it('skips a member it cannot reach: the write was not sent there, so it goes elsewhere', async () => {
    const leader = await node();
    const cluster = client(['127.0.0.1:1', leader.address]);
    await cluster.propose(put('a'));
    expect(leader.options.proposals).toHaveLength(1);
  });

  it('never re-sends a write whose answer did not come: `request timed out`, one proposal', async () => {
    const hanging = await node({ onPropose: () => new Promise(() => undefined) });
    const other = await node();
    const cluster = client([hanging.address, other.address], { requestTimeoutMs: 600 });
    const error = await failure(cluster.propose(put('a')));
    expect(isWireError(error, 'Timeout')).toBe(true);
    expect(hanging.options.proposals).toHaveLength(1);
    expect(other.options.calls['Propose'] ?? 0).toBe(0);
  });

  it('never re-sends a write when the leader dies mid-call: `possibly due to connection lost`', async () => {
    const dying: ApplierNode = await node({
      onPropose: () => {
        setImmediate(() => dying.kill());
        return new Promise(() => undefined);
      },
    });
    const other = await node();
    const cluster = client([dying.address, other.address]);
    const error = await failure(cluster.propose(put('a')));
    expect(isWireError(error, 'TimeoutDueToConnectionLost')).toBe(true);
    expect(other.options.calls['Propose'] ?? 0).toBe(0);
  });

  it('retries reads blindly: an unavailable member, then another one', async () => {
    const flaky = await node({ failReadsCount: 2 });
    const cluster = client([flaky.address]);
    await cluster.propose(put('a'));
    await cluster.read(range('a'), false);
    expect(flaky.options.calls['Read']).toBe(3);
  });

  it('retries a read at another member when the first one is dead', async () => {
    const dead = await node();
    const alive = await node();
    dead.kill();
    const cluster = client([dead.address, alive.address]);
    await cluster.read(range('a'), false);
    expect(alive.options.calls['Read']).toBe(1);
  });

  it('gives up after maxAttemptsCount when no leader is known: `etcdserver: no leader`', async () => {
    const a = await node({ notLeader: '' });
    const b = await node({ notLeader: '' });
    const cluster = client([a.address, b.address], { maxAttemptsCount: 4 });
    const error = await failure(cluster.propose(put('a')));
    expect(isWireError(error, 'NoLeader')).toBe(true);
    expect((a.options.calls['Propose'] ?? 0) + (b.options.calls['Propose'] ?? 0)).toBe(4);
  });

  it('a hint loop between two followers is bounded too', async () => {
    const a = await node();
    const b = await node({ notLeader: a.address });
    a.options.notLeader = b.address;
    const cluster = client([a.address, b.address], { maxAttemptsCount: 5 });
    await failure(cluster.propose(put('a')));
    expect((a.options.calls['Propose'] ?? 0) + (b.options.calls['Propose'] ?? 0)).toBe(5);
  });

  it('passes the cluster’s own answer through (an etcd error is final, not retried)', async () => {
    const leader = await node();
    const cluster = client([leader.address]);
    const error = await failure(cluster.propose(entry({ type: 'compact', request: { revision: 1000 } })));
    expect(isWireError(error, 'FutureRev')).toBe(true);
    expect(leader.options.calls['Propose']).toBe(1);
  });

  it('opens a watch stream at a reachable member, skipping a dead one', async () => {
    const dead = await node();
    const alive = await node();
    dead.kill();
    const cluster = client([dead.address, alive.address]);
    const stream = await cluster.openWatch();
    stream.on('error', () => undefined); // cancel() below ends it with CANCELLED
    stream.write({ username: '', auth_revision: '0', request: Buffer.from([0x0a, 0x03, 0x0a, 0x01, 0x61]) });
    await new Promise((resolve) => stream.once('data', resolve));
    expect(alive.options.watchRequests).toHaveLength(1);
    stream.cancel();
  });

  it('a cancelled caller stops the loop', async () => {
    const hanging = await node({ onPropose: () => new Promise(() => undefined) });
    const cluster = client([hanging.address]);
    const controller = new AbortController();
    const pending = failure(cluster.propose(put('a'), controller.signal));
    setTimeout(() => controller.abort(), 100);
    expect(isWireError(await pending, 'Canceled')).toBe(true);
  });

  describe('leader watches', () => {
    async function watched(member: ApplierNode): Promise<void> {
      const deadline = Date.now() + 5000;
      while (member.leaderWatchersCount === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(member.leaderWatchersCount).toBe(1);
    }

    it('a leader a member names in a newer term becomes the target, and a read waiting at the old one is asked there', async () => {
      let hangReads = false;
      const old = await node({ onRead: () => (hangReads ? new Promise(() => undefined) : undefined) });
      const fresh = await node();
      const cluster = client([old.address, fresh.address], { requestTimeoutMs: 10_000 });
      cluster.watchLeaders();
      await cluster.propose(put('a'));
      expect(cluster.currentTarget).toBe(old.address);
      await watched(fresh);
      hangReads = true;
      const started = Date.now();
      const reading = cluster.read(range('a'), false);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(old.options.calls['Read']).toBe(1);
      fresh.announceLeader(fresh.address, 5);
      await reading;
      expect(Date.now() - started).toBeLessThan(2000);
      expect(fresh.options.calls['Read']).toBe(1);
      expect(cluster.currentTarget).toBe(fresh.address);
    });

    it('a replaced leader is passed over while the new one cannot be reached yet: a call never lands on a silent old leader', async () => {
      let hangReads = false;
      const old = await node({ onRead: () => (hangReads ? new Promise(() => undefined) : undefined) });
      const other = await node();
      // The new leader's port refuses connections for now (a member just restarted, its channel
      // in reconnect backoff, as the gateway sees it).
      const fresh = await node();
      fresh.kill();
      const cluster = client([old.address, other.address, fresh.address], { requestTimeoutMs: 10_000 });
      cluster.watchLeaders();
      await cluster.propose(put('a'));
      expect(cluster.currentTarget).toBe(old.address);
      await watched(other);
      hangReads = true;
      const started = Date.now();
      const reading = cluster.read(range('a'), false);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(old.options.calls['Read']).toBe(1);
      other.announceLeader(fresh.address, 5);
      await reading;
      expect(Date.now() - started).toBeLessThan(4000);
      expect(old.options.calls['Read']).toBe(1);
      expect(other.options.calls['Read']).toBe(1);
      // Once the old leader speaks again (its own watch names the new leader), it is a member like any other.
      expect(cluster.deposedLeader).toBe(old.address);
      old.announceLeader(fresh.address, 5);
      await vi.waitFor(() => expect(cluster.deposedLeader).toBeUndefined());
      // A member that names a newer leader itself speaks, so it is not passed over; the leader
      // it replaced (the one that is down here) is.
      old.announceLeader(other.address, 6);
      await vi.waitFor(() => expect(cluster.currentTarget).toBe(other.address));
      expect(cluster.deposedLeader).toBe(fresh.address);
      other.announceLeader(old.address, 7);
      await vi.waitFor(() => expect(cluster.currentTarget).toBe(old.address));
      expect(cluster.deposedLeader).toBe(fresh.address);
    });

    it('a call waiting for a silent leader\'s connection goes to the new leader as soon as a member names it', async () => {
      const silent = await silentMember();
      const fresh = await node();
      const cluster = client([silent, fresh.address], { requestTimeoutMs: 10_000 });
      cluster.watchLeaders();
      await watched(fresh);
      fresh.announceLeader(silent, 4);
      await vi.waitFor(() => expect(cluster.currentTarget).toBe(silent));
      const reading = cluster.read(range('a'), false);
      // The call waits for the silent member's channel (for up to a second, as for any member).
      await new Promise((resolve) => setTimeout(resolve, 100));
      const announcedAt = Date.now();
      fresh.announceLeader(fresh.address, 5);
      await reading;
      expect(Date.now() - announcedAt).toBeLessThan(500);
      expect(fresh.options.calls['Read']).toBe(1);
      expect(cluster.currentTarget).toBe(fresh.address);
    });

    it('a request pausing between tries goes to the new leader as soon as a member names it', async () => {
      const dead = await node();
      dead.kill();
      const fresh = await node();
      // Every pause as long as the bounds allow: 5 s here.
      const longest: Rng = { nextUint32: () => 0xffff_ffff, nextFloat: () => 0.999_999, nextInt: (bound) => bound - 1 };
      const cluster = client([dead.address, fresh.address], { requestTimeoutMs: 20_000, retryDelayMs: 5000, rng: longest });
      cluster.watchLeaders();
      await watched(fresh);
      const started = Date.now();
      const reading = cluster.read(range('a'), false);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The dead member refused the call; the request pauses before its next try.
      expect(fresh.options.calls['Read'] ?? 0).toBe(0);
      fresh.announceLeader(fresh.address, 5);
      await reading;
      expect(Date.now() - started).toBeLessThan(2000);
      expect(fresh.options.calls['Read']).toBe(1);
    });

    it('an older term, or no leader, changes nothing', async () => {
      const a = await node();
      const b = await node();
      const cluster = client([a.address, b.address]);
      cluster.watchLeaders();
      await watched(b);
      b.announceLeader(b.address, 5);
      await vi.waitFor(() => expect(cluster.currentTarget).toBe(b.address));
      b.announceLeader(a.address, 4);
      b.announceLeader('', 9);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(cluster.currentTarget).toBe(b.address);
      b.announceLeader(a.address, 6);
      await vi.waitFor(() => expect(cluster.currentTarget).toBe(a.address));
    });

    it('names each new leader to its listeners once, with its id and address', async () => {
      const a = await node();
      const b = await node();
      const cluster = client([a.address, b.address]);
      const named: { id: bigint; address: string }[] = [];
      cluster.onLeaderNamed((leader) => named.push(leader));
      const removed: unknown[] = [];
      const remove = cluster.onLeaderNamed((leader) => removed.push(leader));
      remove();
      expect(cluster.namedLeader).toBeUndefined();
      cluster.watchLeaders();
      await watched(b);
      b.announceLeader(b.address, 5);
      await vi.waitFor(() => expect(named).toEqual([{ id: 7n, address: b.address }]));
      // The same leader in a newer term, an older term, no leader: nobody is told.
      b.announceLeader(b.address, 6);
      b.announceLeader(a.address, 4);
      b.announceLeader('', 9);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(named).toHaveLength(1);
      b.announceLeader(a.address, 7);
      await vi.waitFor(() => expect(named).toHaveLength(2));
      expect(named[1]).toEqual({ id: 7n, address: a.address });
      expect(cluster.namedLeader).toEqual({ id: 7n, address: a.address });
      expect(removed).toEqual([]);
    });

    it('a proposal waiting at the old leader is not asked again: its outcome is unknown', async () => {
      let hang = false;
      const old = await node({ onPropose: () => (hang ? new Promise(() => undefined) : undefined) });
      const fresh = await node();
      const cluster = client([old.address, fresh.address], { requestTimeoutMs: 800 });
      cluster.watchLeaders();
      await cluster.propose(put('a'));
      await watched(fresh);
      hang = true;
      const proposing = failure(cluster.propose(put('b')));
      await new Promise((resolve) => setTimeout(resolve, 100));
      fresh.announceLeader(fresh.address, 5);
      expect(isWireError(await proposing, 'Timeout')).toBe(true);
      expect(old.options.proposals).toHaveLength(2);
      expect(fresh.options.calls['Propose'] ?? 0).toBe(0);
    });
  });
});
