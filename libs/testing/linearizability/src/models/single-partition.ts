import { combineHashes, hashString } from '../hashing';
import type { Model } from '../types';

/**
 * Every key's state, by the key's slot (slots are handed out in order of first use; a missing
 * slot holds the inner model's initial state).
 */
export interface SinglePartitionState<S> {
  readonly slots: readonly (S | undefined)[];
  /** XOR of one hash per key whose state is not the initial one, kept up to date on every step. */
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
  const slotOfKey = new Map<string, number>();
  const keyOfSlot: string[] = [];
  const slotOf = (key: string): number => {
    let slot = slotOfKey.get(key);
    if (slot === undefined) {
      slot = keyOfSlot.push(key) - 1;
      slotOfKey.set(key, slot);
    }
    return slot;
  };
  const isInitial = (state: S | undefined): boolean => state === undefined || model.equal(state, initial);
  const slotHash = (slot: number, state: S | undefined): number =>
    isInitial(state) ? 0 : combineHashes(hashString(keyOfSlot[slot] as string), model.hash(state as S));
  const empty: SinglePartitionState<S> = { slots: [], hash: 0 };
  return {
    name: `${model.name} (single partition)`,
    init: () => empty,
    step(state, input, output) {
      const slot = slotOf(partitionKey(input));
      const before = state.slots[slot];
      const result = model.step(before ?? initial, input, output);
      if (!result.ok) return result;
      if (model.equal(result.state, before ?? initial)) return { ok: true, state };
      const slots = state.slots.slice();
      slots[slot] = result.state;
      return { ok: true, state: { slots, hash: state.hash ^ slotHash(slot, before) ^ slotHash(slot, result.state) } };
    },
    ...(model.isReadOnly ? { isReadOnly: model.isReadOnly } : {}),
    equal(a, b) {
      if (a.hash !== b.hash) return false;
      const length = Math.max(a.slots.length, b.slots.length);
      for (let slot = 0; slot < length; slot++) {
        const [x, y] = [a.slots[slot], b.slots[slot]];
        if (x === y) continue;
        if (!model.equal(x ?? initial, y ?? initial)) return false;
      }
      return true;
    },
    hash: (state) => state.hash,
    describeOperation: (input, output) => model.describeOperation(input, output),
    describeState(state) {
      const entries = state.slots.flatMap((value, slot) =>
        isInitial(value) ? [] : [[keyOfSlot[slot] as string, model.describeState(value as S)] as const],
      );
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([key, text]) => `${JSON.stringify(key)}: ${text}`).join(', ')}}`;
    },
  };
}
