import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { hasCode } from '@ward/shared/errors';
import { checkLinearizability } from './check';
import type { InvalidHistoryError } from './errors';
import { formatCheckResult } from './format-result';
import type { RegisterInput, RegisterOutput } from './models/register';
import { registerModel } from './models/register';
import type { KvInput, KvOutput } from './models/kv';
import { kvModel } from './models/kv';
import { bruteForceLinearizable, done, executeRegister, replay, respectsRealTime, simulateHistory } from './testing';
import type { Operation } from './types';

type Op = Operation<RegisterInput, RegisterOutput>;

/** Tiny register histories with arbitrary intervals and outputs, about half of them linearizable. */
const tinyHistory: fc.Arbitrary<Op[]> = fc.array(
  fc
    .record({
      clientId: fc.nat(3),
      callTime: fc.nat(12),
      length: fc.nat(6),
      status: fc.constantFrom('ok', 'ok', 'ok', 'unknown', 'failed'),
      kind: fc.constantFrom('read', 'write', 'cas'),
      a: fc.nat(2),
      b: fc.nat(2),
      readsNull: fc.boolean(),
      succeeded: fc.boolean(),
    })
    .map((r): Op => {
      const input: RegisterInput =
        r.kind === 'read' ? { kind: 'read' } : r.kind === 'write' ? { kind: 'write', value: r.a } : { kind: 'cas', from: r.a, to: r.b };
      const output: RegisterOutput =
        input.kind === 'read'
          ? { kind: 'read', value: r.readsNull ? null : r.b }
          : input.kind === 'write'
            ? { kind: 'write' }
            : { kind: 'cas', succeeded: r.succeeded };
      const base = { clientId: r.clientId, input, callTime: r.callTime };
      if (r.status === 'ok') return { ...base, status: 'ok', output, returnTime: r.callTime + r.length };
      return { ...base, status: r.status as 'unknown' | 'failed' };
    }),
  { maxLength: 6 },
);

describe('checkLinearizability against a brute-force oracle', () => {
  it('agrees on random tiny register histories (unknown and failed outcomes included)', () => {
    let legal = 0;
    let runs = 0;
    fc.assert(
      fc.property(tinyHistory, (history) => {
        const expected = bruteForceLinearizable(registerModel, history);
        const result = checkLinearizability(registerModel, history);
        runs++;
        if (expected) legal++;
        expect(result.verdict).toBe(expected ? 'ok' : 'illegal');
      }),
      { numRuns: 3000, seed: 20240611 },
    );
    // The generator must exercise both verdicts.
    expect(legal).toBeGreaterThan(runs / 5);
    expect(legal).toBeLessThan((runs * 4) / 5);
  });

  it('returns, for ok, a linearization that replays legally and respects real time', () => {
    fc.assert(
      fc.property(tinyHistory, (history) => {
        const result = checkLinearizability(registerModel, history);
        if (result.verdict !== 'ok') return;
        const order = result.partitions[0]?.linearization ?? [];
        expect(replay(registerModel, history, order)).toBe(true);
        expect(respectsRealTime(history, order)).toBe(true);
        const completed = history.flatMap((op, index) => (op.status === 'ok' ? [index] : []));
        expect(completed.every((index) => order.includes(index))).toBe(true);
      }),
      { numRuns: 1000, seed: 7 },
    );
  });
});

describe('checkLinearizability on simulated histories', () => {
  it('accepts histories that are linearizable by construction (register with cas, 5 clients)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const history = simulateHistory(new SeededRng(seed), registerModel.init(), executeRegister, {
        clients: 5,
        operations: 300,
        unknownRate: 0.05,
        failRate: 0.05,
        keyOf: () => '',
        nextInput: (rng): RegisterInput => {
          const roll = rng.nextInt(3);
          if (roll === 0) return { kind: 'read' };
          if (roll === 1) return { kind: 'write', value: rng.nextInt(5) };
          return { kind: 'cas', from: rng.nextInt(5), to: rng.nextInt(5) };
        },
      });
      const result = checkLinearizability(registerModel, history, { budget: { maxSteps: 5_000_000 } });
      expect(result.verdict, formatCheckResult(registerModel, history, result)).toBe('ok');
    }
  });
});

describe('illegal diagnostics', () => {
  it('names the partition, a legal longest prefix and the operation that could not be placed', () => {
    const history: Op[] = [
      done(0, 0, 1, { kind: 'write', value: 1 }, { kind: 'write' }),
      done(1, 2, 3, { kind: 'read' }, { kind: 'read', value: 1 }),
      done(0, 4, 5, { kind: 'write', value: 2 }, { kind: 'write' }),
      done(1, 6, 7, { kind: 'read' }, { kind: 'read', value: 1 }),
    ];
    const result = checkLinearizability(registerModel, history);
    expect(result.verdict).toBe('illegal');
    expect(result.illegal).toEqual({ partitionKey: '', longestPrefix: [0, 1, 2], stateAfterPrefix: '2', blockedOperation: 3 });
    const text = formatCheckResult(registerModel, history, result);
    expect(text).toContain('register: illegal');
    expect(text).toContain('#3 client 1 [6, 7] read() -> 1');
    expect(text).toContain('state after the prefix: 2');
  });
});

describe('history validation', () => {
  const write: Op = done(0, 0, 1, { kind: 'write', value: 1 }, { kind: 'write' });
  const reasonOf = (history: Op[], maxOperations?: number): string | undefined => {
    try {
      checkLinearizability(registerModel, history, maxOperations === undefined ? {} : { maxOperations });
      return undefined;
    } catch (error) {
      expect(hasCode(error, 'ERR_TESTING_LIN_INVALID_HISTORY')).toBe(true);
      return (error as InvalidHistoryError).reason;
    }
  };

  it('refuses malformed operations with a coded error naming the reason', () => {
    expect(reasonOf([{ ...write, callTime: Number.NaN }])).toBe('bad-time');
    expect(reasonOf([{ ...write, returnTime: Infinity }])).toBe('bad-time');
    expect(reasonOf([{ ...write, callTime: 2, returnTime: 1 }])).toBe('return-before-call');
    expect(reasonOf([{ ...write, clientId: 1.5 }])).toBe('bad-client');
    expect(reasonOf([{ ...write, status: 'done' } as unknown as Op])).toBe('bad-status');
    expect(reasonOf([write, write, write], 2)).toBe('too-many-operations');
    expect(reasonOf([write, null as unknown as Op])).toBe('bad-status');
    expect(reasonOf([write])).toBeUndefined();
  });

  it('accepts an empty history as linearizable', () => {
    expect(checkLinearizability(registerModel, []).verdict).toBe('ok');
  });
});

describe('the README quick start', () => {
  it('is linearizable as documented, and not once the delete is known to have completed first', () => {
    const history: Operation<KvInput, KvOutput>[] = [
      { clientId: 1, input: { kind: 'put', key: 'a', value: 'x' }, callTime: 10, status: 'ok', output: { kind: 'put' }, returnTime: 14 },
      { clientId: 2, input: { kind: 'get', key: 'a' }, callTime: 12, status: 'ok', output: { kind: 'get', value: 'x', version: 1 }, returnTime: 20 },
      { clientId: 3, input: { kind: 'delete', key: 'a' }, callTime: 15, status: 'unknown' },
    ];
    expect(checkLinearizability(kvModel, history, { budget: { maxSteps: 10_000_000 } }).verdict).toBe('ok');
    const deleted = [...history.slice(0, 2), { ...history[2], status: 'ok', output: { kind: 'delete' }, returnTime: 16 } as Operation<KvInput, KvOutput>];
    expect(checkLinearizability(kvModel, [...deleted, { ...(history[1] as Operation<KvInput, KvOutput>), callTime: 17, returnTime: 18 }]).verdict).toBe('illegal');
  });
});
