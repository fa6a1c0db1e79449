// Test support for this library's own tests: a generator of histories that are linearizable by
// construction, reference implementations that answer operations, and a brute-force oracle.
import type { Rng } from '@ward/shared/clock';
import type { AppendKvInput, AppendKvOutput, AppendKvState } from './models/append-kv';
import type { KvInput, KvOutput, KvState } from './models/kv';
import type { RegisterInput, RegisterOutput, RegisterState } from './models/register';
import type { Model, Operation } from './types';
import { UNKNOWN_OUTPUT } from './types';

/** Answers an operation on a real (sequential) object: the new state and the output. */
export type Execute<S, I, O> = (state: S, input: I) => { state: S; output: O };

export const executeRegister: Execute<RegisterState, RegisterInput, RegisterOutput> = (state, input) => {
  if (input.kind === 'read') return { state, output: { kind: 'read', value: state } };
  if (input.kind === 'write') return { state: input.value, output: { kind: 'write' } };
  const succeeded = state === input.from;
  return { state: succeeded ? input.to : state, output: { kind: 'cas', succeeded } };
};

export const executeAppendKv: Execute<AppendKvState, AppendKvInput, AppendKvOutput> = (state, input) => {
  if (input.kind === 'get') return { state, output: { kind: 'get', value: state } };
  return { state: input.kind === 'put' ? input.value : state + input.value, output: { kind: input.kind } };
};

/** Executes on ONE key's state (callers keep a map of keys). */
export const executeKvKey: Execute<KvState, KvInput, KvOutput> = (state, input) => {
  const write = (value: string | null): KvState => (value === null ? { value: null, version: 0 } : { value, version: state.version + 1 });
  switch (input.kind) {
    case 'get':
      return { state, output: { kind: 'get', value: state.value, version: state.version } };
    case 'put':
      return { state: write(input.value), output: { kind: 'put' } };
    case 'delete':
      return { state: write(null), output: { kind: 'delete', deleted: state.value !== null } };
    case 'cas': {
      const c = input.compare;
      const holds = 'version' in c ? c.version === state.version : c.value === state.value;
      return { state: holds ? write(input.value) : state, output: { kind: 'cas', succeeded: holds } };
    }
  }
};

/** Knobs of {@link simulateHistory}. */
export interface SimulationOptions<I> {
  readonly clients: number;
  readonly operations: number;
  /** Probability that an operation's outcome is lost (recorded as unknown; applied or not at random). */
  readonly unknownRate: number;
  /** Probability that an operation is refused before it takes effect (recorded as failed). */
  readonly failRate: number;
  readonly nextInput: (rng: Rng, sequence: number) => I;
  /**
   * How a lost operation that did NOT take effect is recorded: 'unknown' (what a client knows) or
   * 'failed' (what a simulator that checked the final committed log can know). Default 'unknown'.
   */
  readonly unappliedLost?: 'unknown' | 'failed';
  /** Partition key of an input: the simulator keeps one state per key. */
  readonly keyOf: (input: I) => string;
}

interface ClientSlot<I, O> {
  phase: 'idle' | 'invoked' | 'applied';
  input?: I;
  callTime?: number;
  output?: O;
}

/**
 * Clients issue operations concurrently against a real object; each operation takes effect at one
 * instant between its call and its return, so the history is linearizable by construction (the
 * order of those instants is a witness). Times are integers, one event per tick.
 */
export function simulateHistory<S, I, O>(
  rng: Rng,
  initial: S,
  execute: Execute<S, I, O>,
  options: SimulationOptions<I>,
): Operation<I, O>[] {
  const states = new Map<string, S>();
  const clients: ClientSlot<I, O>[] = Array.from({ length: options.clients }, () => ({ phase: 'idle' }));
  const history: Operation<I, O>[] = [];
  let invoked = 0;
  for (let time = 1; invoked < options.operations || clients.some((c) => c.phase !== 'idle'); time++) {
    const clientId = rng.nextInt(options.clients);
    const client = clients[clientId] as ClientSlot<I, O>;
    if (client.phase === 'idle') {
      if (invoked >= options.operations) continue;
      Object.assign(client, { phase: 'invoked', input: options.nextInput(rng, invoked++), callTime: time });
      continue;
    }
    const input = client.input as I;
    const callTime = client.callTime as number;
    if (client.phase === 'invoked') {
      const roll = rng.nextFloat();
      if (roll < options.failRate) {
        history.push({ clientId, input, callTime, status: 'failed', returnTime: time });
        client.phase = 'idle';
        continue;
      }
      const key = options.keyOf(input);
      const lost = roll < options.failRate + options.unknownRate;
      const applied = !lost || rng.nextInt(2) === 0;
      if (applied) {
        const result = execute(states.has(key) ? (states.get(key) as S) : initial, input);
        states.set(key, result.state);
        client.output = result.output;
      }
      if (lost) {
        const status = applied ? 'unknown' : (options.unappliedLost ?? 'unknown');
        history.push({ clientId, input, callTime, status, returnTime: time });
        client.phase = 'idle';
      } else client.phase = 'applied';
      continue;
    }
    history.push({ clientId, input, callTime, status: 'ok', output: client.output as O, returnTime: time });
    client.phase = 'idle';
  }
  return history;
}

/** True when a must precede b in every linearization (closed intervals: touching = concurrent). */
function precedes(a: Operation<unknown, unknown>, b: Operation<unknown, unknown>): boolean {
  return a.status === 'ok' && a.returnTime < b.callTime;
}

/**
 * Exhaustive oracle for tiny histories (at most ~7 operations, no partitioning): tries every
 * subset of the unknown-outcome operations and every order that respects real time.
 */
export function bruteForceLinearizable<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[]): boolean {
  const live = history.filter((op) => op.status !== 'failed');
  const place = (placed: boolean[], state: S, remainingCompleted: number): boolean => {
    if (remainingCompleted === 0) return true;
    for (let i = 0; i < live.length; i++) {
      if (placed[i]) continue;
      const op = live[i] as Operation<I, O>;
      // Every operation that must precede op has been placed (or is unknown and skipped forever).
      const blocked = live.some((other, j) => !placed[j] && j !== i && other.status === 'ok' && precedes(other, op));
      if (blocked) continue;
      const result = model.step(state, op.input, op.status === 'ok' ? op.output : UNKNOWN_OUTPUT);
      if (!result.ok) continue;
      placed[i] = true;
      const found = place(placed, result.state, remainingCompleted - (op.status === 'ok' ? 1 : 0));
      placed[i] = false;
      if (found) return true;
    }
    return false;
  };
  return place(new Array<boolean>(live.length).fill(false), model.init(), live.filter((op) => op.status === 'ok').length);
}

/** Replays operations in the given order; true when every step is legal. */
export function replay<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[], order: readonly number[]): boolean {
  let state = model.init();
  for (const index of order) {
    const op = history[index] as Operation<I, O>;
    const result = model.step(state, op.input, op.status === 'ok' ? op.output : UNKNOWN_OUTPUT);
    if (!result.ok) return false;
    state = result.state;
  }
  return true;
}

/** True when `order` never places an operation before one that precedes it in real time. */
export function respectsRealTime(history: readonly Operation<unknown, unknown>[], order: readonly number[]): boolean {
  for (let i = 0; i < order.length; i++) {
    for (let j = i + 1; j < order.length; j++) {
      if (precedes(history[order[j] as number] as Operation<unknown, unknown>, history[order[i] as number] as Operation<unknown, unknown>)) return false;
    }
  }
  return true;
}

/** A completed operation, for hand-written histories. */
export function done<I, O>(clientId: number, callTime: number, returnTime: number, input: I, output: O): Operation<I, O> {
  return { clientId, input, callTime, returnTime, status: 'ok', output };
}

/** An operation whose outcome is unknown, for hand-written histories. */
export function lost<I, O>(clientId: number, callTime: number, input: I): Operation<I, O> {
  return { clientId, input, callTime, status: 'unknown' };
}

/** An operation that definitely did not happen, for hand-written histories. */
export function refused<I, O>(clientId: number, callTime: number, returnTime: number, input: I): Operation<I, O> {
  return { clientId, input, callTime, returnTime, status: 'failed' };
}
