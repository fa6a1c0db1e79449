import { describe, expect, it } from 'vitest';
import { checkLinearizability } from '../check';
import { done, lost, refused } from '../testing';
import type { Operation } from '../types';
import { UNKNOWN_OUTPUT } from '../types';
import type { RegisterInput, RegisterOutput } from './register';
import { registerModel } from './register';

type Op = Operation<RegisterInput, RegisterOutput>;
const read = (value: number | null): [RegisterInput, RegisterOutput] => [{ kind: 'read' }, { kind: 'read', value }];
const write = (value: number): [RegisterInput, RegisterOutput] => [{ kind: 'write', value }, { kind: 'write' }];
const cas = (from: number, to: number, succeeded: boolean): [RegisterInput, RegisterOutput] => [
  { kind: 'cas', from, to },
  { kind: 'cas', succeeded },
];
const at = (client: number, call: number, ret: number, [input, output]: [RegisterInput, RegisterOutput]): Op =>
  done(client, call, ret, input, output);
const verdict = (history: Op[]): string => checkLinearizability(registerModel, history).verdict;

describe('registerModel step', () => {
  it('reads null before the first write, then the last value written', () => {
    const s0 = registerModel.init();
    expect(registerModel.step(s0, { kind: 'read' }, { kind: 'read', value: null })).toEqual({ ok: true, state: null });
    expect(registerModel.step(s0, { kind: 'read' }, { kind: 'read', value: 0 }).ok).toBe(false);
    expect(registerModel.step(3, { kind: 'write', value: 4 }, { kind: 'write' })).toEqual({ ok: true, state: 4 });
  });

  it('a cas succeeds exactly when the value equals from', () => {
    expect(registerModel.step(1, { kind: 'cas', from: 1, to: 2 }, { kind: 'cas', succeeded: true })).toEqual({ ok: true, state: 2 });
    expect(registerModel.step(1, { kind: 'cas', from: 1, to: 2 }, { kind: 'cas', succeeded: false }).ok).toBe(false);
    expect(registerModel.step(3, { kind: 'cas', from: 1, to: 2 }, { kind: 'cas', succeeded: false })).toEqual({ ok: true, state: 3 });
    expect(registerModel.step(3, { kind: 'cas', from: 1, to: 2 }, { kind: 'cas', succeeded: true }).ok).toBe(false);
  });

  it('accepts any outcome for an unknown output and applies the input', () => {
    expect(registerModel.step(5, { kind: 'read' }, UNKNOWN_OUTPUT)).toEqual({ ok: true, state: 5 });
    expect(registerModel.step(1, { kind: 'cas', from: 1, to: 2 }, UNKNOWN_OUTPUT)).toEqual({ ok: true, state: 2 });
    expect(registerModel.step(3, { kind: 'cas', from: 1, to: 2 }, UNKNOWN_OUTPUT)).toEqual({ ok: true, state: 3 });
  });

  it('refuses an output of another kind than the input (a recorder bug)', () => {
    expect(() => registerModel.step(null, { kind: 'read' }, { kind: 'write' })).toThrow(TypeError);
  });

  it('describes operations and states', () => {
    expect(registerModel.describeOperation({ kind: 'cas', from: 1, to: 2 }, { kind: 'cas', succeeded: false })).toBe('cas(1, 2) -> failed');
    expect(registerModel.describeOperation({ kind: 'write', value: 7 }, UNKNOWN_OUTPUT)).toBe('write(7) -> ?');
    expect(registerModel.describeState(null)).toBe('null');
  });
});

describe('register histories', () => {
  // The two examples of Porcupine's README, whose register starts at 0 (ours starts empty, so a
  // first write of 0 precedes them).
  const initialZero = [at(3, -10, -5, write(0))];

  it('accepts reads of the old and of the new value, both concurrent with the write', () => {
    expect(verdict([...initialZero, at(0, 0, 100, write(100)), at(1, 25, 75, read(100)), at(2, 30, 60, read(0))])).toBe('ok');
  });

  it('rejects a read of the old value after another client read the new one', () => {
    expect(verdict([...initialZero, at(0, 0, 100, write(200)), at(1, 10, 30, read(200)), at(2, 40, 90, read(0))])).toBe('illegal');
  });

  it('rejects a read of null once the register was written', () => {
    expect(verdict([at(0, 0, 1, write(1)), at(1, 2, 3, read(null))])).toBe('illegal');
    expect(verdict([at(0, 0, 2, write(1)), at(1, 1, 3, read(null))])).toBe('ok');
  });

  it('treats touching intervals as concurrent (closed intervals)', () => {
    // The read returns at 10 and the write is called at 10: the read may follow the write.
    expect(verdict([at(0, 10, 20, write(1)), at(1, 0, 10, read(1))])).toBe('ok');
    expect(verdict([at(0, 11, 20, write(1)), at(1, 0, 10, read(1))])).toBe('illegal');
  });

  it('orders a sequential history exactly as recorded', () => {
    const history = [at(0, 0, 1, write(1)), at(0, 2, 3, cas(1, 2, true)), at(0, 4, 5, read(2)), at(0, 6, 7, cas(1, 3, false))];
    expect(verdict(history)).toBe('ok');
    expect(verdict([...history, at(0, 8, 9, read(3))])).toBe('illegal');
  });
});

describe('register histories with unknown outcomes', () => {
  it('is linearizable only if the unknown write took effect', () => {
    const history: Op[] = [lost(0, 0, write(1)[0]), at(1, 10, 20, read(1))];
    expect(verdict(history)).toBe('ok');
    // Had the same write definitely failed, nobody could read 1.
    expect(verdict([refused(0, 0, 5, write(1)[0]), at(1, 10, 20, read(1))])).toBe('illegal');
  });

  it('is linearizable only if the unknown write did not take effect (yet)', () => {
    const history: Op[] = [at(0, 0, 1, write(0)), lost(1, 2, write(1)[0]), at(2, 10, 20, read(0))];
    expect(verdict(history)).toBe('ok');
    // Had the write completed before the read, the read of 0 would be stale.
    expect(verdict([at(0, 0, 1, write(0)), at(1, 2, 5, write(1)), at(2, 10, 20, read(0))])).toBe('illegal');
  });

  it('lets an unknown write take effect long after its client gave up', () => {
    const history: Op[] = [
      at(0, 0, 1, write(0)),
      { ...lost<RegisterInput, RegisterOutput>(1, 2, write(1)[0]), returnTime: 3 },
      at(2, 10, 20, read(0)),
      at(2, 30, 40, read(1)),
      at(2, 50, 60, read(1)),
    ];
    expect(verdict(history)).toBe('ok');
    // ...but only once: it cannot undo a later write.
    expect(verdict([...history, at(0, 70, 80, write(2)), at(2, 90, 95, read(1))])).toBe('illegal');
  });

  it('still rejects a read of a value never written', () => {
    expect(verdict([lost(0, 0, write(1)[0]), lost(1, 0, cas(1, 2, true)[0]), at(2, 10, 20, read(3))])).toBe('illegal');
  });

  it('an unknown cas may succeed, which enables the read', () => {
    const history: Op[] = [at(0, 0, 1, write(1)), lost(1, 2, cas(1, 2, true)[0]), at(2, 10, 20, read(2))];
    expect(verdict(history)).toBe('ok');
    expect(verdict([at(0, 0, 1, write(3)), lost(1, 2, cas(1, 2, true)[0]), at(2, 10, 20, read(2))])).toBe('illegal');
  });

  it('an unknown read constrains nothing and is dropped before the search', () => {
    const result = checkLinearizability(registerModel, [lost(0, 0, { kind: 'read' }), at(1, 1, 2, write(1))]);
    expect(result.verdict).toBe('ok');
    expect(result.partitions[0]?.operationCount).toBe(1);
  });
});
