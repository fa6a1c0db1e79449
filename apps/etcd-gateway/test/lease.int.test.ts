// Leases end to end on real raft-node processes behind a gateway: grant, put with a lease, expiry by
// the leader's lessor (the key goes, watchers see the DELETE), keep-alive past the TTL, revoke,
// time-to-live with keys, the lease list, a leader killed with SIGKILL (the lease survives with a
// renewed deadline and still expires later), the etcd3 npm client's leases and locks, and the
// auth rules of spec §3.5 (checklist rows 57–61, 72, 75) with real users.
import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { Etcd3, EtcdLockFailedError } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import type { EtcdTestClient } from '../src/testing/etcd-client';
import { bytes, login, must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

interface TimeToLive {
  ID: string;
  TTL: string;
  grantedTTL: string;
  keys: Buffer[];
}

let ward: WardCluster;
let etcd: EtcdTestClient;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function grant(ttl: number, token?: string, id = '0'): Promise<string> {
  return (await must<{ ID: string }>(etcd.call('Lease', 'LeaseGrant', { ID: id, TTL: String(ttl) }, token), 'LeaseGrant')).ID;
}

async function valueOf(key: string, token?: string): Promise<string | null> {
  const range = await must<{ kvs: Array<{ value: Buffer }> }>(etcd.call('KV', 'Range', { key: bytes(key) }, token), `Range ${key}`);
  return range.kvs.length === 0 ? null : range.kvs[0]!.value.toString();
}

/** A LeaseKeepAlive stream: send renewals, read answers in order, see how it ended. */
function keepAliveStream(token?: string): { renew(id: string): Promise<{ ID: string; TTL: string }>; ended: Promise<{ code: number; details: string } | undefined>; close(): void } {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('token', token);
  const stream = (etcd.client('Lease') as unknown as { LeaseKeepAlive(m: Metadata): ClientDuplexStream<object, { ID: string; TTL: string }> }).LeaseKeepAlive(metadata);
  const waiters: Array<{ resolve(value: { ID: string; TTL: string }): void; reject(error: Error): void }> = [];
  let endResolve: (value: { code: number; details: string } | undefined) => void = () => undefined;
  const ended = new Promise<{ code: number; details: string } | undefined>((resolve) => (endResolve = resolve));
  stream.on('data', (response: { ID: string; TTL: string }) => waiters.shift()?.resolve(response));
  stream.on('error', (error: { code: number; details: string }) => {
    endResolve({ code: error.code, details: error.details });
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(error.details));
  });
  stream.on('end', () => endResolve(undefined));
  return {
    renew: (id) =>
      new Promise((resolve, reject) => {
        waiters.push({ resolve, reject });
        stream.write({ ID: id });
      }),
    ended,
    close: () => stream.cancel(),
  };
}

beforeAll(async () => {
  ward = await startWardCluster();
  etcd = ward.client();
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

describe('leases without auth', () => {
  it('grant answers a positive ID and the TTL; a TTL below the minimum is raised to it (2 s)', async () => {
    const granted = await must<{ ID: string; TTL: string }>(etcd.call('Lease', 'LeaseGrant', { TTL: '1' }), 'grant');
    expect(BigInt(granted.ID)).toBeGreaterThan(0n);
    expect(granted.TTL).toBe('2');
    expect(await etcd.call('Lease', 'LeaseGrant', { ID: granted.ID, TTL: '5' })).toEqual({ ok: false, code: 9, details: 'etcdserver: lease already exists' });
    expect(await etcd.call('Lease', 'LeaseGrant', { TTL: '9000000001' })).toEqual({ ok: false, code: 11, details: 'etcdserver: too large lease TTL' });
  });

  it('an expired lease takes its key with it and watchers see the DELETE', async () => {
    const id = await grant(2);
    await must(etcd.call('KV', 'Put', { key: bytes('exp/a'), value: bytes('1'), lease: id }), 'put');
    const watch = (etcd.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, { created: boolean; events: Array<{ type: string; kv: { key: Buffer } }> }> }).Watch(new Metadata());
    const events: string[] = [];
    watch.on('data', (response: { events: Array<{ type: string; kv: { key: Buffer } }> }) => events.push(...response.events.map((e) => `${e.type} ${e.kv.key.toString()}`)));
    watch.on('error', () => undefined);
    watch.write({ create_request: { key: bytes('exp/'), range_end: bytes('exp0') } });
    const started = Date.now();
    expect(await valueOf('exp/a')).toBe('1');
    await eventually('the key expires', async () => ((await valueOf('exp/a')) === null ? true : undefined), 10_000);
    // Not before the TTL (2 s from the grant), and not much later than the 500 ms check after it.
    expect(Date.now() - started).toBeGreaterThan(1000);
    await eventually('the DELETE event arrives', async () => (events.includes('Delete exp/a') ? true : undefined), 5000);
    const ttl = await must<TimeToLive>(etcd.call('Lease', 'LeaseTimeToLive', { ID: id }), 'ttl');
    expect(ttl.TTL).toBe('-1');
    watch.cancel();
  });

  it('keep-alive renews past the TTL; an unknown lease is answered TTL 0', async () => {
    const id = await grant(2);
    await must(etcd.call('KV', 'Put', { key: bytes('kept'), value: bytes('v'), lease: id }), 'put');
    const stream = keepAliveStream();
    for (let i = 0; i < 8; i++) {
      expect(await stream.renew(id)).toMatchObject({ ID: id, TTL: '2' });
      await sleep(500);
    }
    expect(await valueOf('kept')).toBe('v');
    expect(await stream.renew('12345')).toMatchObject({ ID: '12345', TTL: '0' });
    stream.close();
    await eventually('the key expires after renewals stop', async () => ((await valueOf('kept')) === null ? true : undefined), 10_000);
  });

  it('time-to-live lists the keys, the list names every lease, revoke deletes the keys', async () => {
    const id = await grant(60);
    await must(etcd.call('KV', 'Put', { key: bytes('ttl/a'), value: bytes('1'), lease: id }), 'put a');
    await must(etcd.call('KV', 'Put', { key: bytes('ttl/b'), value: bytes('2'), lease: id }), 'put b');
    const ttl = await must<TimeToLive>(etcd.call('Lease', 'LeaseTimeToLive', { ID: id, keys: true }), 'ttl');
    expect(ttl.grantedTTL).toBe('60');
    expect(Number(ttl.TTL)).toBeGreaterThanOrEqual(58);
    expect(Number(ttl.TTL)).toBeLessThanOrEqual(60);
    expect(ttl.keys.map((k) => k.toString()).sort()).toEqual(['ttl/a', 'ttl/b']);
    const list = await must<{ leases: Array<{ ID: string }> }>(etcd.call('Lease', 'LeaseLeases', {}), 'leases');
    expect(list.leases.map((l) => l.ID)).toContain(id);
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: id }), 'revoke');
    expect(await valueOf('ttl/a')).toBeNull();
    expect(await valueOf('ttl/b')).toBeNull();
    expect(await etcd.call('Lease', 'LeaseRevoke', { ID: id })).toEqual({ ok: false, code: 5, details: 'etcdserver: requested lease not found' });
    expect(await etcd.call('KV', 'Put', { key: bytes('ttl/c'), value: bytes('1'), lease: id })).toEqual({ ok: false, code: 5, details: 'etcdserver: requested lease not found' });
  });

  it('the JSON gateway grants, lists, keeps alive and revokes', async () => {
    const gateway = ward.gateways[0]!;
    const post = async (url: string, body: object) => {
      const response = await gateway.injectHttp({ method: 'POST', url, payload: body });
      return { status: response.statusCode, body: response.json() as Record<string, unknown> };
    };
    const granted = await post('/v3/lease/grant', { TTL: '30' });
    expect(granted.status).toBe(200);
    const id = String(granted.body.ID);
    const list = await post('/v3/lease/leases', {});
    expect((list.body.leases as Array<{ ID: string }>).map((l) => l.ID)).toContain(id);
    expect((await post('/v3/lease/timetolive', { ID: id })).body).toMatchObject({ ID: id, grantedTTL: '30' });
    // LeaseKeepAlive over HTTP: one renewal per request body, answered as a stream line (etcd's shape).
    const renewed = await gateway.injectHttp({ method: 'POST', url: '/v3/lease/keepalive', payload: { ID: id } });
    expect(renewed.statusCode).toBe(200);
    expect(renewed.body.endsWith('\n')).toBe(true);
    expect(JSON.parse(renewed.body)).toMatchObject({ result: { ID: id, TTL: '30' } });
    const unknown = JSON.parse((await gateway.injectHttp({ method: 'POST', url: '/v3/lease/keepalive', payload: { ID: '12345' } })).body) as { result: Record<string, unknown> };
    expect(unknown.result.ID).toBe('12345');
    expect(unknown.result.TTL).toBeUndefined();
    expect((await post('/v3/lease/revoke', { ID: id })).status).toBe(200);
    expect((await post('/v3/lease/revoke', { ID: id })).status).toBe(404);
  });

  it('the etcd3 client: lease(2) + put + keep-alive past the TTL, revoke, and a lost lease', async () => {
    const client = new Etcd3({ hosts: ward.gateways[0]!.grpcAddress });
    try {
      const lease = client.lease(2);
      await lease.put('e3/kept').value('v');
      await sleep(4500);
      expect(await client.get('e3/kept').string()).toBe('v');
      await lease.revoke();
      expect(await client.get('e3/kept').string()).toBeNull();

      const lost = client.lease(2, { autoKeepAlive: false });
      const lostEvent = new Promise<string>((resolve) => lost.on('lost', (error: Error) => resolve(error.message)));
      await lost.put('e3/lost').value('v');
      await sleep(3500);
      expect(await client.get('e3/lost').string()).toBeNull();
      await lost.keepaliveOnce().catch(() => undefined);
      expect(await lostEvent).toMatch(/lease/i);
    } finally {
      client.close();
    }
  }, 30_000);

  it('the etcd3 client: lock("x").do() excludes a second client; a released lock can be taken', async () => {
    const a = new Etcd3({ hosts: ward.gateways[0]!.grpcAddress });
    const b = new Etcd3({ hosts: ward.gateways[0]!.grpcAddress });
    try {
      let inside = 0;
      let most = 0;
      let refused = 0;
      const work = async (client: Etcd3): Promise<void> => {
        for (;;) {
          try {
            await client.lock('x').ttl(5).do(async () => {
              inside += 1;
              most = Math.max(most, inside);
              await sleep(30);
              inside -= 1;
            });
            return;
          } catch (error) {
            if (!(error instanceof EtcdLockFailedError)) throw error;
            refused += 1;
            await sleep(10);
          }
        }
      };
      await Promise.all([work(a), work(b), work(a), work(b), work(a), work(b)]);
      expect(most).toBe(1);
      expect(refused).toBeGreaterThan(0);

      const held = a.lock('held').ttl(30);
      await held.acquire();
      await expect(b.lock('held').ttl(30).acquire()).rejects.toBeInstanceOf(EtcdLockFailedError);
      await held.release();
      const next = b.lock('held').ttl(30);
      await next.acquire();
      await next.release();
    } finally {
      a.close();
      b.close();
    }
  }, 40_000);

  it('a lease survives kill -9 of the leader, with a renewed deadline, and still expires later', async () => {
    const id = await grant(12);
    await must(etcd.call('KV', 'Put', { key: bytes('failover/k'), value: bytes('v'), lease: id }), 'put');
    // Let the lease run down a while (4 s of 12), so a full TTL on the new leader is visible.
    await sleep(4000);
    const before = await must<TimeToLive>(etcd.call('Lease', 'LeaseTimeToLive', { ID: id }), 'ttl before');
    expect(Number(before.TTL)).toBeLessThanOrEqual(8);
    const leader = await ward.cluster.waitForLeader(10_000);
    await ward.cluster.kill(leader);
    const newLeader = await ward.cluster.waitForLeader(20_000, [leader]);
    expect(newLeader).not.toBe(leader);
    const ttl = await must<TimeToLive>(etcd.call('Lease', 'LeaseTimeToLive', { ID: id }), 'ttl on the new leader');
    // The new leader gives the lease its full TTL plus the election timeout (etcd's Promote):
    // more than was left before (which only shrinks), unless it took over 5 s to answer.
    expect(Number(ttl.TTL)).toBeGreaterThan(Number(before.TTL));
    expect(Number(ttl.TTL)).toBeLessThanOrEqual(13);
    expect(await valueOf('failover/k')).toBe('v');
    await eventually('the lease expires on the new leader', async () => ((await valueOf('failover/k')) === null ? true : undefined), 20_000);
    expect((await must<TimeToLive>(etcd.call('Lease', 'LeaseTimeToLive', { ID: id }), 'ttl')).TTL).toBe('-1');
    await ward.cluster.startMember(leader);
  }, 60_000);

  afterAll(async () => {
    // The auth part below counts on a clean lease table.
    const list = await must<{ leases: Array<{ ID: string }> }>(etcd.call('Lease', 'LeaseLeases', {}), 'leases');
    for (const lease of list.leases) await etcd.call('Lease', 'LeaseRevoke', { ID: lease.ID });
  });
});

describe('leases with auth (spec §3.5; checklist rows 57–61, 72, 75)', () => {
  let rootToken: string;
  let userToken: string;
  let otherToken: string;

  beforeAll(async () => {
    await setUpAuth(etcd, { rootPassword: 'root-pw', user: 'alice', password: 'alice-pw', prefix: 'app/' });
    rootToken = await login(etcd, 'root', 'root-pw');
    await must(etcd.call('Auth', 'RoleAdd', { name: 'read-app' }, rootToken), 'RoleAdd');
    await must(etcd.call('Auth', 'RoleGrantPermission', { name: 'read-app', perm: { permType: 'Read', key: bytes('app/'), range_end: bytes('app0') } }, rootToken), 'grant');
    await must(etcd.call('Auth', 'UserAdd', { name: 'bob', password: 'bob-pw' }, rootToken), 'UserAdd bob');
    await must(etcd.call('Auth', 'UserGrantRole', { user: 'bob', role: 'read-app' }, rootToken), 'grant bob');
    userToken = await login(etcd, 'alice', 'alice-pw');
    otherToken = await login(etcd, 'bob', 'bob-pw');
  }, 60_000);

  const EMPTY = { ok: false, code: 3, details: 'etcdserver: user name is empty' };
  const DENIED = { ok: false, code: 7, details: 'etcdserver: permission denied' };

  it('every Lease RPC needs a user while auth is on (etcd 3.7)', async () => {
    expect(await etcd.call('Lease', 'LeaseGrant', { TTL: '10' })).toEqual(EMPTY);
    expect(await etcd.call('Lease', 'LeaseLeases', {})).toEqual(EMPTY);
    expect(await etcd.call('Lease', 'LeaseTimeToLive', { ID: '1' })).toEqual(EMPTY);
    expect(await etcd.call('Lease', 'LeaseRevoke', { ID: '1' })).toEqual(EMPTY);
    const stream = keepAliveStream();
    await stream.renew('1').catch(() => undefined);
    expect(await stream.ended).toEqual({ code: 3, details: 'etcdserver: user name is empty' });
  });

  it('row 57/58: a user may attach to a lease only with WRITE on the keys already attached; revoke needs the same', async () => {
    const id = await grant(60, userToken);
    await must(etcd.call('KV', 'Put', { key: bytes('app/a'), value: bytes('1'), lease: id }, userToken), 'alice attaches app/a');
    const rootLease = await grant(60, rootToken);
    await must(etcd.call('KV', 'Put', { key: bytes('secret'), value: bytes('s'), lease: rootLease }, rootToken), 'root attaches secret');
    expect(await etcd.call('KV', 'Put', { key: bytes('app/b'), value: bytes('2'), lease: rootLease }, userToken)).toEqual(DENIED);
    expect(await etcd.call('Lease', 'LeaseRevoke', { ID: rootLease }, userToken)).toEqual(DENIED);
    expect(await etcd.call('Lease', 'LeaseRevoke', { ID: id }, otherToken)).toEqual(DENIED);
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: id }, userToken), 'alice revokes her lease');
    expect(await valueOf('app/a', rootToken)).toBeNull();
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: rootLease }, rootToken), 'root revokes');
  });

  it('row 59/60: keep-alive needs WRITE on every attached key (the error ends the stream); time-to-live with keys needs READ', async () => {
    const id = await grant(60, userToken);
    await must(etcd.call('KV', 'Put', { key: bytes('app/k'), value: bytes('1'), lease: id }, userToken), 'put');
    const mine = keepAliveStream(userToken);
    expect(await mine.renew(id)).toMatchObject({ ID: id, TTL: '60' });
    mine.close();
    const theirs = keepAliveStream(otherToken);
    await theirs.renew(id).catch(() => undefined);
    expect(await theirs.ended).toEqual({ code: 7, details: 'etcdserver: permission denied' });
    expect(await etcd.call('Lease', 'LeaseTimeToLive', { ID: id, keys: true }, otherToken)).toMatchObject({ ok: true, value: { ID: id, grantedTTL: '60' } });
    const rootLease = await grant(60, rootToken);
    await must(etcd.call('KV', 'Put', { key: bytes('secret2'), value: bytes('s'), lease: rootLease }, rootToken), 'put secret2');
    expect(await etcd.call('Lease', 'LeaseTimeToLive', { ID: rootLease, keys: true }, otherToken)).toEqual(DENIED);
    expect(await etcd.call('Lease', 'LeaseTimeToLive', { ID: rootLease }, otherToken)).toMatchObject({ ok: true, value: { grantedTTL: '60' } });
    // row 61: the list needs READ on every key of every lease: one unreadable key refuses it.
    expect(await etcd.call('Lease', 'LeaseLeases', {}, otherToken)).toEqual(DENIED);
    expect(await etcd.call('Lease', 'LeaseLeases', {}, rootToken)).toMatchObject({ ok: true });
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: rootLease }, rootToken), 'revoke root lease');
    const list = await must<{ leases: Array<{ ID: string }> }>(etcd.call('Lease', 'LeaseLeases', {}, otherToken), 'list as bob');
    expect(list.leases.map((l) => l.ID)).toContain(id);
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: id }, userToken), 'cleanup');
  });

  it('row 75: a txn put attaching to a lease that holds a key the user cannot write is denied', async () => {
    const rootLease = await grant(60, rootToken);
    await must(etcd.call('KV', 'Put', { key: bytes('eoo'), value: bytes('e'), lease: rootLease }, rootToken), 'root attaches eoo');
    const txn = { success: [{ request_put: { key: bytes('app/txn'), value: bytes('1'), lease: rootLease } }] };
    expect(await etcd.call('KV', 'Txn', txn, userToken)).toEqual(DENIED);
    expect(await valueOf('app/txn', rootToken)).toBeNull();
    await must(etcd.call('Lease', 'LeaseRevoke', { ID: rootLease }, rootToken), 'cleanup');
  });

  it('row 72: expiry revokes as root, deleting keys whoever attached them', async () => {
    const id = await grant(2, userToken);
    await must(etcd.call('KV', 'Put', { key: bytes('app/expiring'), value: bytes('1'), lease: id }, userToken), 'put');
    expect(await valueOf('app/expiring', userToken)).toBe('1');
    await eventually('the key expires', async () => ((await valueOf('app/expiring', rootToken)) === null ? true : undefined), 10_000);
  });
});
