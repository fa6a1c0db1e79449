import { assertNever } from '@ward/shared/errors';
import { combineHashes, hashScalar } from '../hashing';
import type { Model, StepResult, UnknownOutput } from '../types';
import { UNKNOWN_OUTPUT } from '../types';

/**
 * What a compare-and-swap checks on one key: its value (null = the key is absent) or its etcd
 * version (number of writes since the key was created; 0 = absent).
 */
export type KvCompare = { readonly value: string | null } | { readonly version: number };

/**
 * An operation on ward's key-value store, one key at a time (keys and values as strings: hex or
 * UTF-8 of the bytes, chosen by the recorder and used consistently).
 * - `get`: read the key.
 * - `put`: set the value (creates the key at version 1, else version + 1).
 * - `delete`: remove the key (version back to 0).
 * - `cas`: if `compare` holds, set the value to `value` (or delete the key when `value` is null).
 */
export type KvInput =
  | { readonly kind: 'get'; readonly key: string }
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'delete'; readonly key: string }
  | { readonly kind: 'cas'; readonly key: string; readonly compare: KvCompare; readonly value: string | null };

/**
 * What the client saw. Optional fields are checked only when present: a recorder that does not
 * know the version of a get's answer leaves `version` out.
 */
export type KvOutput =
  | { readonly kind: 'get'; readonly value: string | null; readonly version?: number }
  | { readonly kind: 'put' }
  | { readonly kind: 'delete'; readonly deleted?: boolean }
  | { readonly kind: 'cas'; readonly succeeded: boolean };

/** The state of ONE key (the model is partitioned by key). */
export interface KvState {
  readonly value: string | null;
  readonly version: number;
}

const ABSENT: KvState = Object.freeze({ value: null, version: 0 });

function compareHolds(state: KvState, compare: KvCompare): boolean {
  return 'version' in compare ? state.version === compare.version : state.value === compare.value;
}

function write(state: KvState, value: string | null): KvState {
  return value === null ? ABSENT : { value, version: state.version + 1 };
}

function stepKv(state: KvState, input: KvInput, output: KvOutput | UnknownOutput): StepResult<KvState> {
  const known = output !== UNKNOWN_OUTPUT;
  if (known && output.kind !== input.kind) {
    throw new TypeError(`kv model: ${input.kind} input with ${output.kind} output`);
  }
  switch (input.kind) {
    case 'get': {
      if (!known) return { ok: true, state };
      const seen = output as { value: string | null; version?: number };
      const legal = seen.value === state.value && (seen.version === undefined || seen.version === state.version);
      return legal ? { ok: true, state } : { ok: false };
    }
    case 'put':
      return { ok: true, state: write(state, input.value) };
    case 'delete': {
      const deleted = known ? (output as { deleted?: boolean }).deleted : undefined;
      if (deleted !== undefined && deleted !== (state.value !== null)) return { ok: false };
      return { ok: true, state: ABSENT };
    }
    case 'cas': {
      const holds = compareHolds(state, input.compare);
      if (known && (output as { succeeded: boolean }).succeeded !== holds) return { ok: false };
      return { ok: true, state: holds ? write(state, input.value) : state };
    }
    default:
      return assertNever(input, 'kv input');
  }
}

function describeCompare(compare: KvCompare): string {
  return 'version' in compare ? `version=${compare.version}` : `value=${JSON.stringify(compare.value)}`;
}

function describeKvOperation(input: KvInput, output: KvOutput | UnknownOutput): string {
  const key = JSON.stringify(input.key);
  const seen = output === UNKNOWN_OUTPUT ? undefined : output;
  switch (input.kind) {
    case 'get': {
      if (seen?.kind !== 'get') return `get(${key}) -> ?`;
      return `get(${key}) -> ${JSON.stringify(seen.value)}${seen.version === undefined ? '' : ` v${seen.version}`}`;
    }
    case 'put':
      return `put(${key}, ${JSON.stringify(input.value)})${seen ? '' : ' -> ?'}`;
    case 'delete':
      return `delete(${key}) -> ${seen?.kind === 'delete' ? String(seen.deleted ?? 'ok') : '?'}`;
    case 'cas':
      return `cas(${key}, ${describeCompare(input.compare)}, ${JSON.stringify(input.value)}) -> ${
        seen?.kind === 'cas' ? (seen.succeeded ? 'ok' : 'failed') : '?'
      }`;
    default:
      return assertNever(input, 'kv input');
  }
}

/**
 * Ward's key-value semantics per key: get/put/delete/compare-and-swap with etcd-style per-key
 * versions. Keys never interact, so the history is partitioned by key.
 */
export const kvModel: Model<KvState, KvInput, KvOutput> = {
  name: 'kv',
  init: () => ABSENT,
  step: stepKv,
  partitionKey: (input) => input.key,
  isReadOnly: (input) => input.kind === 'get',
  equal: (a, b) => a.value === b.value && a.version === b.version,
  hash: (state) => combineHashes(hashScalar(state.value), state.version),
  describeOperation: describeKvOperation,
  describeState: (state) => (state.value === null ? '(absent)' : `${JSON.stringify(state.value)} v${state.version}`),
};
