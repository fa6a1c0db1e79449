// Histories corrupted on purpose must be rejected. Every corruption below is illegal by an
// argument given next to it, independent of the checker; each test also asserts that it found
// enough places to corrupt, so it cannot pass vacuously.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { checkLinearizability } from './check';
import type { AppendKvInput, AppendKvOutput } from './models/append-kv';
import { appendKvModel } from './models/append-kv';
import type { RegisterInput, RegisterOutput, RegisterState } from './models/register';
import { registerModel } from './models/register';
import { singlePartition } from './models/single-partition';
import { parseEdnKvHistory } from './parsers/edn-kv-history';
import { parseJepsenRegisterLog } from './parsers/jepsen-register-log';
import { executeRegister, replay, simulateHistory } from './testing';
import type { CompletedOperation, Operation } from './types';

type KvOp = Operation<AppendKvInput, AppendKvOutput>;
type RegOp = Operation<RegisterInput, RegisterOutput>;

const testdata = new URL('../testdata/', import.meta.url);
const kvFixture = (name: string): KvOp[] => parseEdnKvHistory(readFileSync(new URL(`kv/${name}.txt`, testdata), 'utf8'));
const BUDGET = { budget: { maxSteps: 5_000_000 } };
const kvVerdict = (history: KvOp[]): string => checkLinearizability(appendKvModel, history, BUDGET).verdict;

const isGet = (op: KvOp): op is CompletedOperation<AppendKvInput, AppendKvOutput> & { output: { kind: 'get'; value: string } } =>
  op.status === 'ok' && op.output.kind === 'get';
const withOutput = (op: KvOp, value: string): KvOp => ({ ...(op as CompletedOperation<AppendKvInput, AppendKvOutput>), output: { kind: 'get', value } });

describe('corrupting a one-client (sequential) history', () => {
  // With one client no operations overlap, so the only candidate linearization is the recorded
  // order: the history is linearizable iff replaying it in that order is legal.
  const history = kvFixture('c01-ok');
  const order = history.map((_, index) => index);
  // Replays need every key's state at once.
  const allKeys = singlePartition(appendKvModel);

  it('is sequential and replays legally as recorded', () => {
    expect(new Set(history.map((op) => op.clientId)).size).toBe(1);
    expect(replay(allKeys, history, order)).toBe(true);
    expect(kvVerdict(history)).toBe('ok');
  });

  it('swapping the values of two gets of one key that differ is rejected', () => {
    const gets = history.flatMap((op, index) => (isGet(op) ? [index] : []));
    let swaps = 0;
    for (const i of gets) {
      for (const j of gets) {
        const [a, b] = [history[i] as KvOp, history[j] as KvOp];
        if (i >= j || a.input.key !== b.input.key || !isGet(a) || !isGet(b) || a.output.value === b.output.value) continue;
        const corrupted = [...history];
        corrupted[i] = withOutput(a, b.output.value);
        corrupted[j] = withOutput(b, a.output.value);
        expect(replay(allKeys, corrupted, order)).toBe(false);
        expect(kvVerdict(corrupted)).toBe('illegal');
        swaps++;
      }
    }
    expect(swaps).toBeGreaterThan(5);
  });

  it('dropping a write is rejected exactly when the sequential replay notices', () => {
    let rejected = 0;
    history.forEach((op, index) => {
      if (op.input.kind === 'get') return;
      const dropped = history.filter((_, other) => other !== index);
      const legal = replay(allKeys, dropped, dropped.map((_, i) => i));
      expect(kvVerdict(dropped)).toBe(legal ? 'ok' : 'illegal');
      if (!legal) rejected++;
    });
    expect(rejected).toBeGreaterThan(5);
  });

  it('changing any get value is rejected', () => {
    const gets = history.flatMap((op, index) => (isGet(op) ? [index] : []));
    expect(gets.length).toBeGreaterThan(5);
    for (const index of gets) {
      const corrupted = [...history];
      const op = history[index] as KvOp & { output: { value: string } };
      corrupted[index] = withOutput(op, `${op.output.value}!`);
      expect(kvVerdict(corrupted)).toBe('illegal');
    }
  });
});

describe('corrupting concurrent kv histories (c10-ok, c50-ok)', () => {
  // Every appended value ("x <process> <n> y") is unique, so a get containing it must be
  // linearized after the append that wrote it.
  const appendsSeenByGets = (history: KvOp[]): { append: number; get: number }[] => {
    const found: { append: number; get: number }[] = [];
    history.forEach((op, index) => {
      if (op.input.kind !== 'append') return;
      const value = op.input.value;
      const get = history.findIndex((other) => isGet(other) && other.input.key === op.input.key && other.output.value.includes(value));
      if (get !== -1) found.push({ append: index, get });
    });
    return found;
  };

  it.each(['c10-ok', 'c50-ok'])('%s: dropping an append whose value a get saw is rejected', (name) => {
    const history = kvFixture(name);
    const pairs = appendsSeenByGets(history);
    expect(pairs.length).toBeGreaterThan(20);
    for (const { append } of pairs.filter((_, i) => i % Math.ceil(pairs.length / 6) === 0)) {
      expect(kvVerdict(history.filter((_, index) => index !== append))).toBe('illegal');
    }
  });

  it.each(['c10-ok', 'c50-ok'])('%s: a get that returns before the append it saw is called is rejected', (name) => {
    // The get saw the append's unique value, so it must follow the append; moving the get's
    // return before the append's call makes it precede the append in real time.
    const history = kvFixture(name);
    const overlapping = appendsSeenByGets(history).filter(({ append, get }) => (history[get] as KvOp).callTime < (history[append] as KvOp).callTime);
    expect(overlapping.length).toBeGreaterThan(0);
    for (const { append, get } of overlapping.slice(0, 5)) {
      const corrupted = [...history];
      corrupted[get] = { ...(history[get] as CompletedOperation<AppendKvInput, AppendKvOutput>), returnTime: (history[append] as KvOp).callTime - 0.5 };
      expect(kvVerdict(corrupted)).toBe('illegal');
    }
  });

  it('c10-ok: swapping two gets of an append-only key is rejected', () => {
    // Key "9" is only appended to, so its value only grows: a get that precedes another in real
    // time sees a prefix of what the later one sees. After the swap the earlier get sees the
    // longer value and the later one a strict prefix of it: impossible.
    const history = kvFixture('c10-ok');
    expect(history.some((op) => op.input.key === '9' && op.input.kind === 'put')).toBe(false);
    const gets = history.flatMap((op, index) => (isGet(op) && op.input.key === '9' ? [index] : []));
    let swaps = 0;
    for (const i of gets) {
      for (const j of gets) {
        const [early, late] = [history[i] as CompletedOperation<AppendKvInput, AppendKvOutput>, history[j] as CompletedOperation<AppendKvInput, AppendKvOutput>];
        const [a, b] = [(early.output as { value: string }).value, (late.output as { value: string }).value];
        if (!(early.returnTime < late.callTime) || a.length >= b.length || swaps >= 8) continue;
        const corrupted = [...history];
        corrupted[i] = withOutput(early, b);
        corrupted[j] = withOutput(late, a);
        expect(kvVerdict(corrupted)).toBe('illegal');
        swaps++;
      }
    }
    expect(swaps).toBe(8);
  });

  it.each(['c10-ok', 'c50-ok'])('%s: a get of a value nobody wrote is rejected', (name) => {
    const history = kvFixture(name);
    const gets = history.flatMap((op, index) => (isGet(op) ? [index] : []));
    for (const index of [gets[Math.floor(gets.length / 3)] as number, gets[gets.length - 1] as number]) {
      const corrupted = [...history];
      const op = history[index] as KvOp & { output: { value: string } };
      corrupted[index] = withOutput(op, `${op.output.value}§`);
      expect(kvVerdict(corrupted)).toBe('illegal');
    }
  });
});

describe('corrupting the linearizable jepsen etcd histories', () => {
  const files = readFileSync(new URL('jepsen-etcd/EXPECTED.txt', testdata), 'utf8')
    .split('\n')
    .filter((line) => line.endsWith(' linearizable'))
    .map((line) => line.split(' ')[0] as string);

  it.each(files)('%s: a read of a value never written is rejected', (file) => {
    // Jepsen wrote values 0..4 only.
    const history = parseJepsenRegisterLog(readFileSync(new URL(`jepsen-etcd/${file}`, testdata), 'utf8'));
    const reads = history.flatMap((op, index) => (op.status === 'ok' && op.output.kind === 'read' ? [index] : []));
    expect(reads.length).toBeGreaterThan(0);
    const index = reads[Math.floor(reads.length / 2)] as number;
    const corrupted = [...history];
    corrupted[index] = { ...(history[index] as CompletedOperation<RegisterInput, RegisterOutput>), output: { kind: 'read', value: 99 } };
    expect(checkLinearizability(registerModel, corrupted, BUDGET).verdict).toBe('illegal');
  });
});

describe('corrupting simulated register histories with unique written values', () => {
  // Every write writes a fresh value (its sequence number), so each completed read names the one
  // write it follows. Histories are linearizable by construction before corruption.
  const histories = Array.from({ length: 12 }, (_, seed) =>
    simulateHistory<RegisterState, RegisterInput, RegisterOutput>(
      new SeededRng(1000 + seed),
      registerModel.init(),
      executeRegister,
      {
        clients: 4,
        operations: 120,
        unknownRate: 0,
        failRate: 0,
        keyOf: () => '',
        nextInput: (rng, sequence) => (rng.nextInt(2) === 0 ? { kind: 'read' } : { kind: 'write', value: sequence }),
      },
    ),
  );
  const completed = (op: RegOp | undefined): op is CompletedOperation<RegisterInput, RegisterOutput> => op?.status === 'ok';
  const writerOf = (history: RegOp[], value: number | null): RegOp | undefined =>
    history.find((op) => op.input.kind === 'write' && op.input.value === value);
  const readValue = (op: RegOp): number | null => ((op as CompletedOperation<RegisterInput, RegisterOutput>).output as { value: number | null }).value;
  const isRead = (op: RegOp): boolean => op.status === 'ok' && op.input.kind === 'read';

  it('they are accepted intact', () => {
    for (const history of histories) expect(checkLinearizability(registerModel, history).verdict).toBe('ok');
  });

  it('swapping two reads is rejected when their writes are ordered in real time', () => {
    // R1 precedes R2, R1 read a, R2 read b, and write(a) precedes write(b). After the swap R1
    // reads b, so write(b) < R1 < R2; R2 reads a, so nothing is written between write(a) and R2;
    // but write(a) < write(b) < R2. Contradiction.
    let swaps = 0;
    for (const history of histories) {
      history.forEach((r1, i) => {
        history.forEach((r2, j) => {
          if (!isRead(r1) || !isRead(r2) || !completed(r1) || !(r1.returnTime < r2.callTime)) return;
          const [wa, wb] = [writerOf(history, readValue(r1)), writerOf(history, readValue(r2))];
          if (!completed(wa) || !completed(wb) || !(wa.returnTime < wb.callTime) || swaps >= 60) return;
          const corrupted = [...history];
          corrupted[i] = { ...r1, output: (r2 as CompletedOperation<RegisterInput, RegisterOutput>).output };
          corrupted[j] = { ...(r2 as CompletedOperation<RegisterInput, RegisterOutput>), output: r1.output };
          expect(checkLinearizability(registerModel, corrupted).verdict).toBe('illegal');
          swaps++;
        });
      });
    }
    expect(swaps).toBe(60);
  });

  it('dropping the write a read saw is rejected', () => {
    let drops = 0;
    for (const history of histories) {
      const read = history.find((op) => isRead(op) && readValue(op) !== null);
      const writer = read && writerOf(history, readValue(read));
      expect(writer).toBeDefined();
      expect(checkLinearizability(registerModel, history.filter((op) => op !== writer)).verdict).toBe('illegal');
      drops++;
    }
    expect(drops).toBe(histories.length);
  });

  it('moving a write return before a concurrent write call is rejected when a later read saw the first', () => {
    // W1 and W2 overlap, W1 called first; a read R called after both returned reads W1's value, so
    // W2 took effect before W1. Moving W1's return before W2's call forces W1 < W2 < R: R would
    // have to read W2's value (or a later one), never W1's.
    let moves = 0;
    for (const history of histories) {
      history.forEach((r) => {
        if (!isRead(r) || readValue(r) === null) return;
        const w1 = writerOf(history, readValue(r));
        if (!completed(w1)) return;
        const w2Index = history.findIndex(
          (w2) => completed(w2) && w2 !== w1 && w2.input.kind === 'write' && w1.callTime < w2.callTime && w2.callTime < w1.returnTime && w2.returnTime < r.callTime,
        );
        if (w2Index === -1 || w1.returnTime >= r.callTime) return;
        const corrupted = history.map((op) => (op === w1 ? { ...w1, returnTime: (history[w2Index] as RegOp).callTime - 0.5 } : op));
        expect(checkLinearizability(registerModel, corrupted).verdict).toBe('illegal');
        moves++;
      });
    }
    expect(moves).toBeGreaterThan(3);
  });
});
