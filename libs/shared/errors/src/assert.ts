/**
 * A broken invariant: a programmer error, never an operating condition. Nothing should catch it;
 * the process's top-level handler exits (TigerStyle; etcd-io/raft panics the same way).
 */
export class AssertionFailure extends Error {
  constructor(message: string) {
    super(`assertion failed: ${message}`);
    this.name = 'AssertionFailure';
  }
}

/** Runtime-agnostic assertion for code that cannot see Node's `assert`. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailure(message);
}

/** Marks a branch that a discriminated union makes unreachable. */
export function assertNever(value: never, what: string): never {
  throw new AssertionFailure(`unexpected ${what}: ${String(value)}`);
}
