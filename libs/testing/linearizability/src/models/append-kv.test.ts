import { describe, expect, it } from 'vitest';
import { checkLinearizability } from '../check';
import { done, lost } from '../testing';
import type { Operation } from '../types';
import { UNKNOWN_OUTPUT } from '../types';
import type { AppendKvInput, AppendKvOutput } from './append-kv';
import { appendKvModel } from './append-kv';

type Op = Operation<AppendKvInput, AppendKvOutput>;
const get = (client: number, call: number, ret: number, key: string, value: string): Op =>
  done(client, call, ret, { kind: 'get', key }, { kind: 'get', value });
const append = (client: number, call: number, ret: number, key: string, value: string): Op =>
  done(client, call, ret, { kind: 'append', key, value }, { kind: 'append' });
const put = (client: number, call: number, ret: number, key: string, value: string): Op =>
  done(client, call, ret, { kind: 'put', key, value }, { kind: 'put' });
const verdict = (history: Op[]): string => checkLinearizability(appendKvModel, history).verdict;

describe('appendKvModel', () => {
  it('starts every key at "", put replaces and append concatenates', () => {
    expect(appendKvModel.init()).toBe('');
    expect(appendKvModel.step('ab', { kind: 'append', key: 'k', value: 'c' }, { kind: 'append' })).toEqual({ ok: true, state: 'abc' });
    expect(appendKvModel.step('ab', { kind: 'put', key: 'k', value: 'c' }, { kind: 'put' })).toEqual({ ok: true, state: 'c' });
    expect(appendKvModel.step('ab', { kind: 'get', key: 'k' }, { kind: 'get', value: 'a' }).ok).toBe(false);
    expect(appendKvModel.step('ab', { kind: 'append', key: 'k', value: 'c' }, UNKNOWN_OUTPUT)).toEqual({ ok: true, state: 'abc' });
  });

  it('orders concurrent appends by what a later get saw', () => {
    const history = [append(0, 0, 10, 'k', 'x'), append(1, 0, 10, 'k', 'y'), get(2, 11, 12, 'k', 'yx')];
    expect(verdict(history)).toBe('ok');
    expect(verdict([...history, get(2, 13, 14, 'k', 'xy')])).toBe('illegal');
  });

  it('is linearizable only if the unknown append took effect', () => {
    expect(verdict([lost(0, 0, { kind: 'append', key: 'k', value: 'x' }), get(1, 5, 6, 'k', 'x')])).toBe('ok');
    expect(verdict([get(1, 5, 6, 'k', 'x')])).toBe('illegal');
  });

  it('is linearizable only if the unknown put did not take effect before the get', () => {
    const history: Op[] = [append(0, 0, 1, 'k', 'a'), lost(1, 2, { kind: 'put', key: 'k', value: 'z' }), get(2, 5, 6, 'k', 'a')];
    expect(verdict(history)).toBe('ok');
    expect(verdict([append(0, 0, 1, 'k', 'a'), put(1, 2, 3, 'k', 'z'), get(2, 5, 6, 'k', 'a')])).toBe('illegal');
  });

  it('checks each key separately', () => {
    const result = checkLinearizability(appendKvModel, [append(0, 0, 1, 'a', 'x'), append(0, 2, 3, 'b', 'y'), get(1, 4, 5, 'b', 'y')]);
    expect(result.verdict).toBe('ok');
    expect(result.partitions.map((p) => [p.key, p.operationCount])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });
});
