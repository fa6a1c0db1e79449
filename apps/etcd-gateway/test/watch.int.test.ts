// Watch through the gateway on a real cluster, with and without permission (etcd's
// TestCtlV3AuthAndWatch, TestV3AuthWatchErrorAndWatchId0): refused creates are answered on the
// stream, which stays open; permitted watchers get their events; the check is at creation only.
import { Metadata, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdTestClient } from '../src/testing/etcd-client';
import { bytes, login, must, startWardCluster, type WardCluster } from './support/ward-cluster';

interface WatchResponse {
  watch_id: string;
  created: boolean;
  canceled: boolean;
  cancel_reason: string;
  events: Array<{ type: string; kv: { key: Buffer; value: Buffer } }>;
}

let ward: WardCluster;
let etcd: EtcdTestClient;
let rootToken: string;
let userToken: string;

function openWatch(token: string | undefined): { stream: ClientDuplexStream<object, WatchResponse>; next(timeoutMs?: number): Promise<WatchResponse> } {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('token', token);
  const stream = (etcd.client('Watch') as unknown as { Watch(m: Metadata): ClientDuplexStream<object, WatchResponse> }).Watch(metadata);
  const queue: WatchResponse[] = [];
  const waiters: Array<(r: WatchResponse) => void> = [];
  stream.on('data', (response: WatchResponse) => (waiters.length > 0 ? waiters.shift()!(response) : queue.push(response)));
  stream.on('error', () => undefined);
  return {
    stream,
    next: (timeoutMs = 10_000) =>
      queue.length > 0
        ? Promise.resolve(queue.shift()!)
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no watch response')), timeoutMs);
            waiters.push((response) => (clearTimeout(timer), resolve(response)));
          }),
  };
}

const create = (key: string, rangeEnd?: string) => ({ create_request: { key: bytes(key), ...(rangeEnd === undefined ? {} : { range_end: bytes(rangeEnd) }) } });
const DENIED = 'rpc error: code = PermissionDenied desc = etcdserver: permission denied';

beforeAll(async () => {
  ward = await startWardCluster();
  etcd = ward.client();
  const call = (method: string, request: object, token?: string) => must(etcd.call('Auth', method, request, token), method);
  await call('UserAdd', { name: 'root', password: 'root-pw' });
  await call('UserGrantRole', { user: 'root', role: 'root' });
  await call('RoleAdd', { name: 'watchers' });
  await call('RoleGrantPermission', { name: 'watchers', perm: { permType: 'Read', key: bytes('key'), range_end: bytes('key4') } });
  await call('UserAdd', { name: 'erin', password: 'erin-pw' });
  await call('UserGrantRole', { user: 'erin', role: 'watchers' });
  await call('AuthEnable', {});
  rootToken = await login(etcd, 'root', 'root-pw');
  userToken = await login(etcd, 'erin', 'erin-pw');
}, 120_000);

afterAll(async () => {
  etcd?.close();
  await ward?.stop();
});

describe('Watch with and without permission', () => {
  it('a permitted watch is created and delivers events', async () => {
    const watch = openWatch(userToken);
    watch.stream.write(create('key'));
    const created = await watch.next();
    expect(created).toMatchObject({ created: true, canceled: false });
    await must(etcd.call('KV', 'Put', { key: bytes('key'), value: bytes('v1') }, rootToken));
    const event = await watch.next();
    expect(event.watch_id).toBe(created.watch_id);
    expect(event.events.map((e) => [e.kv.key.toString(), e.kv.value.toString()])).toEqual([['key', 'v1']]);
    watch.stream.cancel();
  }, 30_000);

  it.each([
    ['a key outside the grant', 'key5', undefined],
    ['a range reaching past the grant', 'key', 'key6'],
  ])('%s: canceled on the stream as etcd does (watch id -1, PermissionDenied)', async (_case, key, rangeEnd) => {
    const watch = openWatch(userToken);
    watch.stream.write(create(key, rangeEnd));
    expect(await watch.next()).toMatchObject({ watch_id: '-1', created: true, canceled: true, cancel_reason: DENIED });
    watch.stream.cancel();
  }, 30_000);

  it('a denied create leaves the stream’s other watchers working (TestV3AuthWatchErrorAndWatchId0)', async () => {
    const watch = openWatch(userToken);
    watch.stream.write(create('key1'));
    const allowed = await watch.next();
    expect(allowed).toMatchObject({ created: true, canceled: false });
    watch.stream.write(create('key9'));
    expect(await watch.next()).toMatchObject({ watch_id: '-1', canceled: true });
    await must(etcd.call('KV', 'Put', { key: bytes('key1'), value: bytes('x') }, rootToken));
    const event = await watch.next();
    expect(event.watch_id).toBe(allowed.watch_id);
    expect(event.events[0]!.kv.key.toString()).toBe('key1');
    watch.stream.cancel();
  }, 30_000);

  it('no token while auth is enabled: `user name is empty`; a garbage token: `invalid auth token`', async () => {
    const anonymous = openWatch(undefined);
    anonymous.stream.write(create('key'));
    expect(await anonymous.next()).toMatchObject({ canceled: true, watch_id: '-1', cancel_reason: 'rpc error: code = InvalidArgument desc = etcdserver: user name is empty' });
    anonymous.stream.cancel();
    const garbage = openWatch('garbage');
    garbage.stream.write(create('key'));
    expect(await garbage.next()).toMatchObject({ canceled: true, watch_id: '-1', cancel_reason: 'rpc error: code = Unauthenticated desc = etcdserver: invalid auth token' });
    garbage.stream.cancel();
  }, 30_000);

  it('revoking the grant does not cancel an existing watcher (checked at creation only)', async () => {
    const watch = openWatch(userToken);
    watch.stream.write(create('key2'));
    const created = await watch.next();
    await must(etcd.call('Auth', 'RoleRevokePermission', { role: 'watchers', key: bytes('key'), range_end: bytes('key4') }, rootToken));
    await must(etcd.call('KV', 'Put', { key: bytes('key2'), value: bytes('after-revoke') }, rootToken));
    const event = await watch.next();
    expect(event.watch_id).toBe(created.watch_id);
    expect(event.events[0]!.kv.value.toString()).toBe('after-revoke');
    // A new create is refused now (with a fresh token, the old one's revision is stale anyway).
    const fresh = await login(etcd, 'erin', 'erin-pw');
    const again = openWatch(fresh);
    again.stream.write(create('key2'));
    expect(await again.next()).toMatchObject({ canceled: true, cancel_reason: DENIED });
    watch.stream.cancel();
    again.stream.cancel();
  }, 30_000);
});
