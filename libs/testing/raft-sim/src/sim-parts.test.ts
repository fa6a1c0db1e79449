import { SeededRng } from '@ward/shared/clock';
import { describe, expect, it } from 'vitest';
import { MessageType, message } from '@ward/raft/core';
import { EventQueue } from './event-queue';
import { KvStateMachine, decodeCommand, encodeCommand } from './kv-state-machine';
import type { KvCommand } from './kv-state-machine';
import { CHAOS_PROFILE } from './profile';
import { deriveSeed } from './seeds';
import { SimNetwork } from './sim-network';

describe('EventQueue', () => {
  it('pops by time, then by insertion order', () => {
    const q = new EventQueue<{ time: number; seq: number; name: string }>();
    const rng = new SeededRng(3);
    const items = Array.from({ length: 200 }, (_, seq) => ({ time: rng.nextInt(20), seq, name: `e${seq}` }));
    for (const item of items) q.push(item);
    const popped = [];
    for (let item = q.pop(); item !== undefined; item = q.pop()) popped.push(item);
    expect(popped).toEqual([...items].sort((a, b) => a.time - b.time || a.seq - b.seq));
  });
});

describe('KvStateMachine', () => {
  it('applies puts and CASes with etcd-style versions, once per (client, seq)', () => {
    const kv = new KvStateMachine();
    const put: KvCommand = { client: 1, seq: 1, op: 'put', key: 'k', value: 'a' };
    expect(kv.apply(put)).toEqual({ kind: 'put' });
    expect(kv.apply(put)).toBeUndefined();
    expect(kv.apply({ client: 2, seq: 1, op: 'cas', key: 'k', compare: { version: 1 }, value: 'b' })).toEqual({ kind: 'cas', succeeded: true });
    expect(kv.apply({ client: 2, seq: 2, op: 'cas', key: 'k', compare: { value: 'a' }, value: 'c' })).toEqual({ kind: 'cas', succeeded: false });
    expect(kv.get('k')).toEqual({ value: 'b', version: 2 });
    expect(kv.get('missing')).toEqual({ value: null, version: 0 });
    const restored = KvStateMachine.restore(kv.snapshot());
    expect(restored.stateHash()).toBe(kv.stateHash());
    expect(restored.apply(put)).toBeUndefined();
  });

  it('round-trips commands through entry data', () => {
    const commands: KvCommand[] = [
      { client: 3, seq: 9, op: 'put', key: 'k1', value: 'c3-9' },
      { client: 0, seq: 1, op: 'cas', key: 'k2', compare: { value: null }, value: 'x' },
      { client: 4, seq: 2, op: 'cas', key: 'k0', compare: { value: 'c1-1' }, value: 'y' },
      { client: 4, seq: 3, op: 'cas', key: 'k0', compare: { version: 7 }, value: 'z' },
    ];
    for (const cmd of commands) expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd);
  });
});

describe('SimNetwork', () => {
  const ids = [1n, 2n, 3n, 4n, 5n];
  const config = { ...CHAOS_PROFILE.network, dropRate: 0, duplicateRate: 0 };

  it('asymmetric partitions cut one direction only', () => {
    const net = new SimNetwork(config, new SeededRng(1), ids);
    net.partition('asymmetric-in');
    const cutInto = ids.filter((victim) => ids.every((o) => o === victim || (!net.connected(o, victim) && net.connected(victim, o))));
    expect(cutInto.length).toBe(1);
    net.heal();
    expect(ids.every((a) => ids.every((b) => net.connected(a, b)))).toBe(true);
  });

  it('a split separates two groups completely', () => {
    const net = new SimNetwork(config, new SeededRng(2), ids);
    net.partition('split');
    for (const a of ids) for (const b of ids) expect(net.connected(a, b)).toBe(net.connected(b, a));
  });

  it('delays lie within [min, max] and drops follow the configured rate', () => {
    const net = new SimNetwork({ ...config, dropRate: 0.2 }, new SeededRng(deriveSeed(5, 'network')), ids);
    const m = message(MessageType.Heartbeat, { from: 1n, to: 2n, term: 1 });
    const delays: number[] = [];
    let dropped = 0;
    for (let i = 0; i < 10_000; i++) if (net.send(100, m, (t) => delays.push(t - 100)) === 'dropped') dropped++;
    expect(Math.min(...delays)).toBe(config.minDelayTicks);
    expect(Math.max(...delays)).toBe(config.maxDelayTicks);
    expect(dropped / 10_000).toBeGreaterThan(0.18);
    expect(dropped / 10_000).toBeLessThan(0.22);
  });
});
