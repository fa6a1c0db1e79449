import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Clock } from '@ward/shared/clock';
import { ManualClock } from '@ward/shared/clock';
import { StepBudget } from './budget';
import { checkLinearizability } from './check';
import { appendKvModel } from './models/append-kv';
import { registerModel } from './models/register';
import { parseEdnKvHistory } from './parsers/edn-kv-history';
import { parseJepsenRegisterLog } from './parsers/jepsen-register-log';

const testdata = new URL('../testdata/', import.meta.url);
const kv = (name: string) => parseEdnKvHistory(readFileSync(new URL(`kv/${name}.txt`, testdata), 'utf8'));
const etcd = (name: string) => parseJepsenRegisterLog(readFileSync(new URL(`jepsen-etcd/${name}`, testdata), 'utf8'));

/** A clock that moves forward 1 ms every time it is read. */
function tickingClock(): Clock & { reads: number } {
  const clock = {
    reads: 0,
    nowMs: () => clock.reads,
    monotonicMs: () => clock.reads++,
  };
  return clock;
}

describe('step budget', () => {
  it('is unknown for every budget below the steps a linearizable history needs, ok from there on', () => {
    const history = kv('c10-ok');
    const needed = checkLinearizability(appendKvModel, history).steps;
    expect(needed).toBeGreaterThan(500);
    for (let maxSteps = 0; maxSteps < needed; maxSteps++) {
      const result = checkLinearizability(appendKvModel, history, { budget: { maxSteps } });
      if (result.verdict !== 'unknown') throw new Error(`maxSteps ${maxSteps} of ${needed}: ${result.verdict}`);
      expect(result.unknownReason).toBe('step-budget');
      expect(result.steps).toBe(maxSteps);
    }
    expect(checkLinearizability(appendKvModel, history, { budget: { maxSteps: needed } }).verdict).toBe('ok');
  });

  it('is unknown, never ok, when a hard linearizable register history runs out', () => {
    const history = etcd('etcd_002.log');
    const needed = checkLinearizability(registerModel, history).steps;
    for (const fraction of [0, 0.01, 0.5, 0.999]) {
      const maxSteps = Math.floor(needed * fraction);
      const result = checkLinearizability(registerModel, history, { budget: { maxSteps } });
      expect(result.verdict).toBe('unknown');
      expect(result.partitions[0]?.verdict).toBe('unknown');
    }
  });

  it('is unknown, not illegal, for a non-linearizable history whose proof needs more steps', () => {
    const history = kv('c10-bad');
    const needed = checkLinearizability(appendKvModel, history).steps;
    for (let maxSteps = 0; maxSteps < needed; maxSteps++) {
      expect(checkLinearizability(appendKvModel, history, { budget: { maxSteps } }).verdict).toBe('unknown');
    }
    expect(checkLinearizability(appendKvModel, history, { budget: { maxSteps: needed } }).verdict).toBe('illegal');
  });

  it('reports partitions finished before the budget ran out as ok and the rest as unknown', () => {
    const result = checkLinearizability(appendKvModel, kv('c50-ok'), { budget: { maxSteps: 200_000 } });
    expect(result.verdict).toBe('unknown');
    const verdicts = new Set(result.partitions.map((p) => p.verdict));
    expect(verdicts).toEqual(new Set(['ok', 'unknown']));
  });

  it('finds an illegal partition quickly among hard ones (interleaved partitions)', () => {
    // c50-bad has partitions that take millions of steps; an illegal one is found within 500k.
    const result = checkLinearizability(appendKvModel, kv('c50-bad'), { budget: { maxSteps: 500_000 } });
    expect(result.verdict).toBe('illegal');
    expect(result.partitions.some((p) => p.verdict === 'unknown')).toBe(true);
  });

  it('rejects nonsense limits', () => {
    expect(() => new StepBudget({ maxSteps: -1 })).toThrow(TypeError);
    expect(() => new StepBudget({ maxSteps: 1.5 })).toThrow(TypeError);
    expect(() => new StepBudget({ deadline: { clock: new ManualClock(), timeoutMs: Number.NaN } })).toThrow(TypeError);
  });
});

describe('time budget', () => {
  it('is unknown (time-budget) when the clock passes the deadline mid-search', () => {
    const clock = tickingClock();
    const history = etcd('etcd_002.log');
    const result = checkLinearizability(registerModel, history, { budget: { deadline: { clock, timeoutMs: 20 } } });
    expect(result.verdict).toBe('unknown');
    expect(result.unknownReason).toBe('time-budget');
    // The clock is read once per 1024 steps.
    expect(result.steps).toBeGreaterThan(15 * 1024);
    expect(result.steps).toBeLessThan(25 * 1024);
  });

  it('does not search at all once the deadline has passed', () => {
    const clock = new ManualClock(0);
    const result = checkLinearizability(registerModel, etcd('etcd_000.log'), { budget: { deadline: { clock, timeoutMs: 0 } } });
    expect(result).toMatchObject({ verdict: 'unknown', unknownReason: 'time-budget', steps: 0 });
  });

  it('decides normally within a generous deadline', () => {
    const clock = tickingClock();
    const result = checkLinearizability(registerModel, etcd('etcd_002.log'), { budget: { deadline: { clock, timeoutMs: 1e9 } } });
    expect(result.verdict).toBe('ok');
    expect(clock.reads).toBeGreaterThan(1);
  });
});
