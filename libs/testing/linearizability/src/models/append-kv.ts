import { assertNever } from '@ward/shared/errors';
import { hashString } from '../hashing';
import type { Model, StepResult, UnknownOutput } from '../types';
import { UNKNOWN_OUTPUT } from '../types';

/** A string-valued key-value store with get, put and append (the Porcupine `kv` fixtures). */
export type AppendKvInput =
  | { readonly kind: 'get'; readonly key: string }
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'append'; readonly key: string; readonly value: string };

/** What the client saw: a get returns the whole value ("" for a key never written). */
export type AppendKvOutput =
  | { readonly kind: 'get'; readonly value: string }
  | { readonly kind: 'put' }
  | { readonly kind: 'append' };

/** The value of ONE key: the model is partitioned by key. */
export type AppendKvState = string;

function stepAppendKv(
  state: AppendKvState,
  input: AppendKvInput,
  output: AppendKvOutput | UnknownOutput,
): StepResult<AppendKvState> {
  const known = output !== UNKNOWN_OUTPUT;
  if (known && output.kind !== input.kind) {
    throw new TypeError(`append-kv model: ${input.kind} input with ${output.kind} output`);
  }
  switch (input.kind) {
    case 'get':
      return !known || (output as { value: string }).value === state ? { ok: true, state } : { ok: false };
    case 'put':
      return { ok: true, state: input.value };
    case 'append':
      return { ok: true, state: state + input.value };
    default:
      return assertNever(input, 'append-kv input');
  }
}

function describeAppendKvOperation(input: AppendKvInput, output: AppendKvOutput | UnknownOutput): string {
  switch (input.kind) {
    case 'get':
      return `get(${JSON.stringify(input.key)}) -> ${
        output === UNKNOWN_OUTPUT ? '?' : JSON.stringify(output.kind === 'get' ? output.value : '')
      }`;
    case 'put':
    case 'append':
      return `${input.kind}(${JSON.stringify(input.key)}, ${JSON.stringify(input.value)})${
        output === UNKNOWN_OUTPUT ? ' -> ?' : ''
      }`;
    default:
      return assertNever(input, 'append-kv input');
  }
}

/** Per-key string values: put replaces, append concatenates, get returns the value ("" if unset). */
export const appendKvModel: Model<AppendKvState, AppendKvInput, AppendKvOutput> = {
  name: 'append-kv',
  init: () => '',
  step: stepAppendKv,
  partitionKey: (input) => input.key,
  isReadOnly: (input) => input.kind === 'get',
  equal: (a, b) => a === b,
  hash: hashString,
  describeOperation: describeAppendKvOperation,
  describeState: (state) => JSON.stringify(state),
};
