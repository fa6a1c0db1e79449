import { combineHashes, hashString } from '../hashing';
import type { Model } from '../types';

/** Every key's state; keys whose state equals the inner model's initial state are left out. */
export interface SinglePartitionState<S> {
  readonly byKey: ReadonlyMap<string, S>;
  /** XOR of one hash per stored key, kept up to date on every step. */
  readonly hash: number;
}

/**
 * Turns a per-key model into one whose state holds every key, so the whole history is searched as
 * ONE partition. Much slower; it exists to cross-check the partitioned verdict
 * (P-compositionality) on small histories.
 */
export function singlePartition<S, I, O>(model: Model<S, I, O>): Model<SinglePartitionState<S>, I, O> {
  const partitionKey = model.partitionKey;
  if (partitionKey === undefined) throw new TypeError(`singlePartition: model ${model.name} has no partitionKey`);
  const initial = model.init();
  const entryHash = (key: string, state: S): number => combineHashes(hashString(key), model.hash(state));
  const empty: SinglePartitionState<S> = { byKey: new Map(), hash: 0 };
  return {
    name: `${model.name} (single partition)`,
    init: () => empty,
    step(state, input, output) {
      const key = partitionKey(input);
      const before = state.byKey.get(key) ?? initial;
      const result = model.step(before, input, output);
      if (!result.ok) return result;
      if (model.equal(result.state, before)) return { ok: true, state };
      const byKey = new Map(state.byKey);
      let hash = state.hash;
      if (state.byKey.has(key)) hash ^= entryHash(key, before);
      if (model.equal(result.state, initial)) {
        byKey.delete(key);
      } else {
        byKey.set(key, result.state);
        hash ^= entryHash(key, result.state);
      }
      return { ok: true, state: { byKey, hash } };
    },
    ...(model.isReadOnly ? { isReadOnly: model.isReadOnly } : {}),
    equal(a, b) {
      if (a.hash !== b.hash || a.byKey.size !== b.byKey.size) return false;
      for (const [key, value] of a.byKey) {
        const other = b.byKey.get(key);
        if (other === undefined || !model.equal(value, other)) return false;
      }
      return true;
    },
    hash: (state) => state.hash,
    describeOperation: (input, output) => model.describeOperation(input, output),
    describeState(state) {
      const keys = [...state.byKey.keys()].sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}: ${model.describeState(state.byKey.get(key) as S)}`).join(', ')}}`;
    },
  };
}
