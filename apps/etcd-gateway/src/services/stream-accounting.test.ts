import { describe, expect, it } from 'vitest';
import { etcdMessageType } from '@ward/etcd/proto';
import { isWireError } from '@ward/etcd/wire-errors';
import { addressOfPeer } from '../identity/token-extraction';
import { admitStream, callerOf, StreamAccounting, type CallerLimits } from './stream-accounting';
import { watchResponseFlags } from './watch-response-flags';

const LIMITS: CallerLimits = { streamsPerConnection: 3, streamsPerUser: 4, streamsPerAddress: 5, watchersPerStream: 2, watchersPerCaller: 3 };

describe('addressOfPeer', () => {
  it.each([
    ['127.0.0.1:5000', '127.0.0.1'],
    ['::1:5000', '::1'],
    ['::ffff:10.0.0.1:443', '::ffff:10.0.0.1'],
    ['unknown', 'unknown'],
    ['/tmp/socket', '/tmp/socket'],
  ])('%s is from %s', (peer, address) => expect(addressOfPeer(peer)).toBe(address));
});

describe('StreamAccounting', () => {
  it('bounds the streams of one connection, whoever opens them', () => {
    const accounting = new StreamAccounting(LIMITS);
    const slots = [callerOf('10.0.0.1:1', 'alice'), callerOf('10.0.0.1:1', 'bob'), callerOf('10.0.0.1:1', '')].map((caller) => accounting.admit(caller));
    expect(slots.every((slot) => slot !== undefined)).toBe(true);
    expect(accounting.admit(callerOf('10.0.0.1:1', 'carol'))).toBeUndefined();
    // Another connection of the same address is not affected.
    expect(accounting.admit(callerOf('10.0.0.1:2', 'carol'))).toBeDefined();
  });

  it('bounds one user over all connections and addresses; other users are not affected', () => {
    const accounting = new StreamAccounting(LIMITS);
    for (let i = 0; i < LIMITS.streamsPerUser; i++) expect(accounting.admit(callerOf(`10.0.0.${i}:1`, 'alice'))).toBeDefined();
    expect(accounting.admit(callerOf('10.0.0.9:1', 'alice'))).toBeUndefined();
    expect(accounting.admit(callerOf('10.0.0.9:1', 'bob'))).toBeDefined();
    expect(accounting.admit(callerOf('10.0.0.9:1', ''))).toBeDefined();
  });

  it('bounds anonymous streams per address, over all connections; users on that address are not affected', () => {
    const accounting = new StreamAccounting(LIMITS);
    for (let i = 0; i < LIMITS.streamsPerAddress; i++) expect(accounting.admit(callerOf(`10.0.0.1:${i}`, ''))).toBeDefined();
    expect(accounting.admit(callerOf('10.0.0.1:99', ''))).toBeUndefined();
    expect(accounting.admit(callerOf('10.0.0.1:99', 'alice'))).toBeDefined();
    expect(accounting.admit(callerOf('10.0.0.2:1', ''))).toBeDefined();
  });

  it('release gives back every slot once, however often it is called', () => {
    const accounting = new StreamAccounting(LIMITS);
    const caller = callerOf('10.0.0.1:1', 'alice');
    const slot = accounting.admit(caller)!;
    expect(slot.addWatcher()).toBe(true);
    expect(accounting.streamsOf(caller)).toEqual({ connection: 1, caller: 1 });
    expect(accounting.watchersOf(caller)).toBe(1);
    slot.release();
    slot.release();
    slot.removeWatcher();
    expect(slot.addWatcher()).toBe(false);
    expect(accounting.streamsOf(caller)).toEqual({ connection: 0, caller: 0 });
    expect(accounting.watchersOf(caller)).toBe(0);
    expect(accounting.trackedKeysCount).toBe(0);
  });

  it('bounds watchers per stream and per caller; removing one frees its slot', () => {
    const accounting = new StreamAccounting(LIMITS);
    const caller = callerOf('10.0.0.1:1', '');
    const first = accounting.admit(caller)!;
    const second = accounting.admit(callerOf('10.0.0.1:2', ''))!;
    expect([first.addWatcher(), first.addWatcher(), first.addWatcher()]).toEqual([true, true, false]);
    expect([second.addWatcher(), second.addWatcher()]).toEqual([true, false]);
    expect(accounting.watchersOf(caller)).toBe(3);
    first.removeWatcher();
    expect(second.addWatcher()).toBe(true);
    first.removeWatcher();
    first.removeWatcher(); // none left on this stream: nothing to give back
    expect(accounting.watchersOf(caller)).toBe(2);
    second.release();
    first.release();
    expect(accounting.trackedKeysCount).toBe(0);
  });

  it('refuses limits that are not positive integers', () => {
    expect(() => new StreamAccounting({ ...LIMITS, streamsPerUser: 0 })).toThrow(TypeError);
  });
});

describe('admitStream', () => {
  const names = (name: string) => ({ callerName: async () => name });
  const signal = new AbortController().signal;

  it('counts a stream against its token’s user, and answers `too many requests` at the bound', async () => {
    const accounting = new StreamAccounting({ ...LIMITS, streamsPerUser: 1 });
    const slot = await admitStream(accounting, names('alice'), '10.0.0.1:1', { token: 't' }, signal);
    expect(slot.caller).toEqual({ connection: '10.0.0.1:1', address: '10.0.0.1', username: 'alice' });
    const refused = await admitStream(accounting, names('alice'), '10.0.0.1:2', { token: 't' }, signal).catch((error: unknown) => error);
    expect(isWireError(refused, 'TooManyRequests')).toBe(true);
    expect((refused as Error).message).toBe('etcdserver: too many requests');
    await expect(admitStream(accounting, names('bob'), '10.0.0.1:2', { token: 'u' }, signal)).resolves.toBeDefined();
  });
});

describe('watchResponseFlags', () => {
  const type = etcdMessageType('etcdserverpb.WatchResponse');
  const encode = (fields: object): Uint8Array => type.encode(type.fromObject(fields)).finish();
  const header = { cluster_id: '1', member_id: '2', revision: '300', raft_term: '4' };
  const event = { type: 'PUT', kv: { key: Buffer.from('k'), value: Buffer.alloc(300, 1), create_revision: '5', mod_revision: '6', version: '1' } };

  it.each([
    ['created', { header, watch_id: '7', created: true }, { created: true, canceled: false }],
    ['refused (watch id -1)', { header, watch_id: '-1', created: true, canceled: true, cancel_reason: 'rpc error: x' }, { created: true, canceled: true }],
    ['canceled with a compact revision', { header, watch_id: '3', canceled: true, compact_revision: '9' }, { created: false, canceled: true }],
    ['events', { header, watch_id: '3', events: [event, event] }, { created: false, canceled: false }],
    ['a fragment', { header, watch_id: '3', fragment: true, events: [event] }, { created: false, canceled: false }],
  ])('%s', (_name, fields, flags) => expect(watchResponseFlags(encode(fields))).toEqual(flags));

  it('bytes that are not a message read as neither', () => {
    const bytes = encode({ header, watch_id: '3', canceled: true });
    expect(watchResponseFlags(bytes.subarray(0, bytes.length - 1))).toEqual({ created: false, canceled: false });
    expect(watchResponseFlags(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toEqual({ created: false, canceled: false });
    expect(watchResponseFlags(Uint8Array.from([0x23]))).toEqual({ created: false, canceled: false });
  });
});
