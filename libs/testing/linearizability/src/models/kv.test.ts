import { describe, expect, it } from 'vitest';
import { checkLinearizability } from '../check';
import { done, lost, refused } from '../testing';
import type { Operation } from '../types';
import { UNKNOWN_OUTPUT } from '../types';
import type { KvInput, KvOutput } from './kv';
import { kvModel } from './kv';

type Op = Operation<KvInput, KvOutput>;
type Pair = [KvInput, KvOutput];
const get = (key: string, value: string | null, version?: number): Pair => [
  { kind: 'get', key },
  version === undefined ? { kind: 'get', value } : { kind: 'get', value, version },
];
const put = (key: string, value: string): Pair => [{ kind: 'put', key, value }, { kind: 'put' }];
const del = (key: string, deleted?: boolean): Pair => [
  { kind: 'delete', key },
  deleted === undefined ? { kind: 'delete' } : { kind: 'delete', deleted },
];
const casValue = (key: string, expected: string | null, value: string | null, succeeded: boolean): Pair => [
  { kind: 'cas', key, compare: { value: expected }, value },
  { kind: 'cas', succeeded },
];
const casVersion = (key: string, version: number, value: string | null, succeeded: boolean): Pair => [
  { kind: 'cas', key, compare: { version }, value },
  { kind: 'cas', succeeded },
];
const at = (client: number, call: number, ret: number, [input, output]: Pair): Op => done(client, call, ret, input, output);
const verdict = (history: Op[]): string => checkLinearizability(kvModel, history).verdict;

describe('kvModel step', () => {
  const s0 = kvModel.init();

  it('tracks etcd-style per-key versions: 1 on create, +1 per put, 0 after delete', () => {
    const s1 = kvModel.step(s0, ...put('k', 'a'));
    expect(s1).toEqual({ ok: true, state: { value: 'a', version: 1 } });
    const s2 = s1.ok ? kvModel.step(s1.state, ...put('k', 'b')) : s1;
    expect(s2).toEqual({ ok: true, state: { value: 'b', version: 2 } });
    const s3 = s2.ok ? kvModel.step(s2.state, ...del('k', true)) : s2;
    expect(s3).toEqual({ ok: true, state: { value: null, version: 0 } });
  });

  it('checks a get value, and its version only when the recorder gave one', () => {
    const state = { value: 'a', version: 3 };
    expect(kvModel.step(state, ...get('k', 'a')).ok).toBe(true);
    expect(kvModel.step(state, ...get('k', 'a', 3)).ok).toBe(true);
    expect(kvModel.step(state, ...get('k', 'a', 2)).ok).toBe(false);
    expect(kvModel.step(state, ...get('k', 'b')).ok).toBe(false);
    expect(kvModel.step(s0, ...get('k', null, 0)).ok).toBe(true);
  });

  it('checks whether a delete found the key, when recorded', () => {
    expect(kvModel.step(s0, ...del('k', false)).ok).toBe(true);
    expect(kvModel.step(s0, ...del('k', true)).ok).toBe(false);
    expect(kvModel.step(s0, ...del('k')).ok).toBe(true);
  });

  it('a cas on value or version succeeds exactly when the compare holds; null value deletes', () => {
    const state = { value: 'a', version: 2 };
    expect(kvModel.step(state, ...casValue('k', 'a', 'b', true))).toEqual({ ok: true, state: { value: 'b', version: 3 } });
    expect(kvModel.step(state, ...casValue('k', 'a', 'b', false)).ok).toBe(false);
    expect(kvModel.step(state, ...casValue('k', null, 'b', false))).toEqual({ ok: true, state });
    expect(kvModel.step(s0, ...casValue('k', null, 'b', true))).toEqual({ ok: true, state: { value: 'b', version: 1 } });
    expect(kvModel.step(state, ...casVersion('k', 2, null, true))).toEqual({ ok: true, state: s0 });
    expect(kvModel.step(state, ...casVersion('k', 1, 'c', true)).ok).toBe(false);
  });

  it('applies unknown-outcome writes as if they succeeded, and a cas only if its compare holds', () => {
    expect(kvModel.step(s0, { kind: 'put', key: 'k', value: 'a' }, UNKNOWN_OUTPUT)).toEqual({ ok: true, state: { value: 'a', version: 1 } });
    expect(kvModel.step(s0, casVersion('k', 5, 'x', true)[0], UNKNOWN_OUTPUT)).toEqual({ ok: true, state: s0 });
  });

  it('partitions by key, hashes equal states equally and describes operations', () => {
    expect(kvModel.partitionKey?.({ kind: 'get', key: 'a/b' })).toBe('a/b');
    expect(kvModel.hash({ value: 'x', version: 2 })).toBe(kvModel.hash({ value: 'x', version: 2 }));
    expect(kvModel.hash({ value: 'x', version: 2 })).not.toBe(kvModel.hash({ value: 'x', version: 3 }));
    expect(kvModel.equal({ value: 'x', version: 2 }, { value: 'x', version: 3 })).toBe(false);
    expect(kvModel.describeOperation(...casVersion('k', 0, 'v', false))).toBe('cas("k", version=0, "v") -> failed');
    expect(kvModel.describeState(s0)).toBe('(absent)');
  });
});

describe('kv histories', () => {
  it('keeps keys independent: a stale read on one key is found among others', () => {
    const history = [
      at(0, 0, 1, put('a', '1')),
      at(1, 0, 1, put('b', '1')),
      at(0, 2, 3, put('a', '2')),
      at(1, 4, 5, get('b', '1', 1)),
      at(2, 6, 7, get('a', '1')),
    ];
    const result = checkLinearizability(kvModel, history);
    expect(result.verdict).toBe('illegal');
    expect(result.illegal?.partitionKey).toBe('a');
    expect(result.illegal?.blockedOperation).toBe(4);
    expect(result.partitions.map((p) => p.key)).toEqual(['a', 'b']);
  });

  it('accepts competing cas operations only when exactly one of them wins', () => {
    const base = [at(0, 0, 1, put('k', 'v0'))];
    expect(verdict([...base, at(1, 2, 10, casValue('k', 'v0', 'v1', true)), at(2, 2, 10, casValue('k', 'v0', 'v2', false))])).toBe('ok');
    expect(verdict([...base, at(1, 2, 10, casValue('k', 'v0', 'v1', true)), at(2, 2, 10, casValue('k', 'v0', 'v2', true))])).toBe('illegal');
  });

  it('is linearizable only if the unknown delete took effect', () => {
    const history: Op[] = [at(0, 0, 1, put('k', 'a')), lost(1, 2, del('k')[0]), at(2, 5, 6, get('k', null, 0))];
    expect(verdict(history)).toBe('ok');
    expect(verdict([at(0, 0, 1, put('k', 'a')), refused(1, 2, 3, del('k')[0]), at(2, 5, 6, get('k', null, 0))])).toBe('illegal');
  });

  it('is linearizable only if the unknown put did not take effect (before the read)', () => {
    const history: Op[] = [at(0, 0, 1, put('k', 'a')), lost(1, 2, put('k', 'b')[0]), at(2, 5, 6, get('k', 'a', 1))];
    expect(verdict(history)).toBe('ok');
    expect(verdict([at(0, 0, 1, put('k', 'a')), at(1, 2, 3, put('k', 'b')), at(2, 5, 6, get('k', 'a', 1))])).toBe('illegal');
  });

  it('an unknown put counts in the version when it took effect', () => {
    // Two puts of the same value: the version tells whether the lost one happened.
    const history: Op[] = [at(0, 0, 1, put('k', 'a')), lost(1, 2, put('k', 'a')[0]), at(2, 5, 6, get('k', 'a', 2))];
    expect(verdict(history)).toBe('ok');
    expect(verdict([...history, at(2, 7, 8, get('k', 'a', 1))])).toBe('illegal');
  });
});
