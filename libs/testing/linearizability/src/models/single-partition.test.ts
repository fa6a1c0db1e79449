import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { checkLinearizability } from '../check';
import { executeKvKey, simulateHistory } from '../testing';
import type { Operation } from '../types';
import { UNKNOWN_OUTPUT } from '../types';
import type { KvInput, KvOutput } from './kv';
import { kvModel } from './kv';
import { registerModel } from './register';
import { singlePartition } from './single-partition';

const model = singlePartition(kvModel);

describe('singlePartition', () => {
  it('keeps one state per key and treats keys back at their initial state as absent', () => {
    const put = model.step(model.init(), { kind: 'put', key: 'a', value: '1' }, { kind: 'put' });
    expect(put.ok).toBe(true);
    if (!put.ok) return;
    expect(model.describeState(put.state)).toBe('{"a": "1" v1}');
    const removed = model.step(put.state, { kind: 'delete', key: 'a' }, UNKNOWN_OUTPUT);
    expect(removed.ok && model.describeState(removed.state)).toBe('{}');
    expect(removed.ok && model.equal(removed.state, model.init())).toBe(true);
    expect(removed.ok && model.hash(removed.state)).toBe(model.hash(model.init()));
    expect(model.step(put.state, { kind: 'get', key: 'a' }, { kind: 'get', value: '2' }).ok).toBe(false);
  });

  it('hashes states independently of the order keys were written in', () => {
    const write = (order: string[]) =>
      order.reduce((state, key) => {
        const next = model.step(state, { kind: 'put', key, value: 'v' }, { kind: 'put' });
        return next.ok ? next.state : state;
      }, model.init());
    const ab = write(['a', 'b']);
    const ba = write(['b', 'a']);
    expect(model.equal(ab, ba)).toBe(true);
    expect(model.hash(ab)).toBe(model.hash(ba));
    expect(model.describeState(ab)).toBe('{"a": "v" v1, "b": "v" v1}');
  });

  it('needs a partitioned model', () => {
    expect(() => singlePartition(registerModel)).toThrow(TypeError);
  });

  it('gives the same verdict as per-key partitioning on simulated histories, intact and corrupted', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rng = new SeededRng(seed);
      const history: Operation<KvInput, KvOutput>[] = simulateHistory(rng, kvModel.init(), executeKvKey, {
        clients: 4,
        operations: 40,
        unknownRate: 0.1,
        failRate: 0.05,
        keyOf: (input) => input.key,
        nextInput: (r, sequence) => {
          const key = `k${r.nextInt(3)}`;
          const roll = r.nextInt(10);
          if (roll < 4) return { kind: 'get', key };
          if (roll < 7) return { kind: 'put', key, value: `v${sequence}` };
          if (roll < 8) return { kind: 'delete', key };
          return { kind: 'cas', key, compare: { version: r.nextInt(3) }, value: `c${sequence}` };
        },
      });
      // Corrupt one completed get in half of the seeds.
      const corrupted = history.map((op, index) =>
        seed % 2 === 0 && op.status === 'ok' && op.output.kind === 'get' && index > history.length / 2
          ? { ...op, output: { ...op.output, version: 99 } }
          : op,
      );
      const partitioned = checkLinearizability(kvModel, corrupted).verdict;
      expect(partitioned).toBe(seed % 2 === 0 ? 'illegal' : 'ok');
      expect(checkLinearizability(model, corrupted).verdict).toBe(partitioned);
    }
  });
});
