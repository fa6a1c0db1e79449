import { assertNever } from '@ward/shared/errors';
import { hashScalar } from '../hashing';
import type { Model, StepResult, UnknownOutput } from '../types';
import { UNKNOWN_OUTPUT } from '../types';

/** A register value: compared with `===`. */
export type RegisterValue = number | string;

/**
 * What a client asks a single register (Jepsen's etcd `register` workload): read it, write it, or
 * compare-and-swap it from `from` to `to`.
 */
export type RegisterInput =
  | { readonly kind: 'read' }
  | { readonly kind: 'write'; readonly value: RegisterValue }
  | { readonly kind: 'cas'; readonly from: RegisterValue; readonly to: RegisterValue };

/**
 * What the client saw. `read.value` is null when the register was never written. A cas the server
 * answered with "compare failed" is `{ kind: 'cas', succeeded: false }`.
 */
export type RegisterOutput =
  | { readonly kind: 'read'; readonly value: RegisterValue | null }
  | { readonly kind: 'write' }
  | { readonly kind: 'cas'; readonly succeeded: boolean };

/** The register's content; null before the first write. */
export type RegisterState = RegisterValue | null;

function stepRegister(
  state: RegisterState,
  input: RegisterInput,
  output: RegisterOutput | UnknownOutput,
): StepResult<RegisterState> {
  const known = output !== UNKNOWN_OUTPUT;
  if (known && output.kind !== input.kind) {
    throw new TypeError(`register model: ${input.kind} input with ${output.kind} output`);
  }
  switch (input.kind) {
    case 'read':
      return !known || (output as { value: RegisterState }).value === state ? { ok: true, state } : { ok: false };
    case 'write':
      return { ok: true, state: input.value };
    case 'cas': {
      const matches = state === input.from;
      if (!known) return { ok: true, state: matches ? input.to : state };
      const succeeded = (output as { succeeded: boolean }).succeeded;
      if (succeeded !== matches) return { ok: false };
      return { ok: true, state: matches ? input.to : state };
    }
    default:
      return assertNever(input, 'register input');
  }
}

function describeRegisterOperation(input: RegisterInput, output: RegisterOutput | UnknownOutput): string {
  const result = (text: string): string => (output === UNKNOWN_OUTPUT ? '?' : text);
  switch (input.kind) {
    case 'read':
      return `read() -> ${result(output !== UNKNOWN_OUTPUT && output.kind === 'read' ? String(output.value) : '')}`;
    case 'write':
      return `write(${input.value}) -> ${result('ok')}`;
    case 'cas':
      return `cas(${input.from}, ${input.to}) -> ${result(
        output !== UNKNOWN_OUTPUT && output.kind === 'cas' && output.succeeded ? 'ok' : 'failed',
      )}`;
    default:
      return assertNever(input, 'register input');
  }
}

/** One register with read, write and compare-and-swap, starting empty (null). */
export const registerModel: Model<RegisterState, RegisterInput, RegisterOutput> = {
  name: 'register',
  init: () => null,
  step: stepRegister,
  isReadOnly: (input) => input.kind === 'read',
  equal: (a, b) => a === b,
  hash: hashScalar,
  describeOperation: describeRegisterOperation,
  describeState: (state) => String(state),
};
