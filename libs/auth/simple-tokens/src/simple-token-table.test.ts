import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hasCode } from '@ward/shared/errors';
import {
  SimpleTokenError,
  SimpleTokenTable,
  resolveSimpleTokenTableOptions,
  simpleTokenRefreshIntervalMs,
  type SimpleTokenRecord,
} from './index';

const P1 = 'abcdefghijklmnop';
const P2 = 'ABCDEFGHIJKLMNOP';
const P3 = 'qLVEbLmctfpktPPy';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof SimpleTokenError) return error.code;
    throw error;
  }
  return undefined;
}

describe('SimpleTokenTable: assignment and lookup', () => {
  it('assigns prefix.index to the user and resolves it until nowMs + ttl (exclusive)', () => {
    const table = new SimpleTokenTable({ ttlMs: 300_000 });
    const { token, evictedCount } = table.assign({ prefix: P1, index: 7, username: 'alice', nowMs: 1000 });
    expect(token).toBe(`${P1}.7`);
    expect(evictedCount).toBe(0);
    expect(table.lookup(token, 1000)).toEqual({ token, username: 'alice', index: 7, expiresAtMs: 301_000 });
    expect(table.lookup(token, 300_999)?.username).toBe('alice');
    expect(table.lookup(token, 301_000)).toBeUndefined();
    expect(table.lookup(`${P1}.8`, 1000)).toBeUndefined();
    expect(table.lookup('garbage', 1000)).toBeUndefined();
  });

  it('rejects a duplicate token deterministically instead of crashing (etcd panics)', () => {
    const table = new SimpleTokenTable();
    table.assign({ prefix: P1, index: 7, username: 'alice', nowMs: 0 });
    expect(codeOf(() => table.assign({ prefix: P1, index: 7, username: 'bob', nowMs: 0 }))).toBe('ERR_AUTH_SIMPLE_TOKEN_DUPLICATE');
    expect(table.lookup(`${P1}.7`, 0)?.username).toBe('alice');
  });

  it.each([
    ['short prefix', { prefix: 'abc', index: 1, username: 'u', nowMs: 0 }],
    ['digit prefix', { prefix: 'abcdefghijklmno1', index: 1, username: 'u', nowMs: 0 }],
    ['index 0', { prefix: P1, index: 0, username: 'u', nowMs: 0 }],
    ['fractional index', { prefix: P1, index: 1.5, username: 'u', nowMs: 0 }],
    ['empty user', { prefix: P1, index: 1, username: '', nowMs: 0 }],
    ['negative time', { prefix: P1, index: 1, username: 'u', nowMs: -1 }],
    ['NaN time', { prefix: P1, index: 1, username: 'u', nowMs: Number.NaN }],
  ])('rejects a malformed assignment (%s) with a coded error', (_name, assignment) => {
    const table = new SimpleTokenTable();
    expect(codeOf(() => table.assign(assignment))).toBe('ERR_AUTH_SIMPLE_TOKEN_MALFORMED');
    expect(table.size).toBe(0);
  });
});

describe('SimpleTokenTable: sliding TTL', () => {
  it('refresh slides live tokens, ignores unknown and expired ones, never shortens', () => {
    const table = new SimpleTokenTable({ ttlMs: 1000 });
    const a = table.assign({ prefix: P1, index: 1, username: 'u', nowMs: 0 }).token;
    const b = table.assign({ prefix: P2, index: 2, username: 'u', nowMs: 0 }).token;
    expect(table.refresh([a, 'nope', `${P3}.9`], 900)).toBe(1);
    expect(table.lookup(a, 1899)?.expiresAtMs).toBe(1900);
    expect(table.lookup(b, 1000)).toBeUndefined();
    expect(table.refresh([b], 1000)).toBe(0); // expired at 1000: not revived
    expect(table.refresh([a], 500)).toBe(1); // a lagging leader clock…
    expect(table.lookup(a, 0)?.expiresAtMs).toBe(1900); // …cannot shorten the expiry
  });

  it('expire removes exactly the tokens whose expiry has passed', () => {
    const table = new SimpleTokenTable({ ttlMs: 1000 });
    table.assign({ prefix: P1, index: 1, username: 'u', nowMs: 0 });
    table.assign({ prefix: P2, index: 2, username: 'v', nowMs: 500 });
    expect(table.expire(999)).toBe(0);
    expect(table.expire(1000)).toBe(1);
    expect(table.countOf('u')).toBe(0);
    expect(table.countOf('v')).toBe(1);
    expect(table.expire(1500)).toBe(1);
    expect(table.size).toBe(0);
  });
});

describe('SimpleTokenTable: invalidation', () => {
  it("invalidateUser drops only that user's tokens (UserDelete, UserChangePassword)", () => {
    const table = new SimpleTokenTable();
    table.assign({ prefix: P1, index: 1, username: 'alice', nowMs: 0 });
    table.assign({ prefix: P2, index: 2, username: 'alice', nowMs: 0 });
    table.assign({ prefix: P3, index: 3, username: 'bob', nowMs: 0 });
    expect(table.invalidateUser('alice')).toBe(2);
    expect(table.invalidateUser('nobody')).toBe(0);
    expect(table.lookup(`${P1}.1`, 0)).toBeUndefined();
    expect(table.lookup(`${P3}.3`, 0)?.username).toBe('bob');
  });

  it('clear drops everything (AuthDisable)', () => {
    const table = new SimpleTokenTable();
    table.assign({ prefix: P1, index: 1, username: 'alice', nowMs: 0 });
    table.assign({ prefix: P3, index: 3, username: 'bob', nowMs: 0 });
    expect(table.clear()).toBe(2);
    expect(table.size).toBe(0);
    expect(table.countOf('bob')).toBe(0);
  });
});

describe('SimpleTokenTable: bounds', () => {
  it("evicts the user's earliest-expiring token at maxTokensPerUser", () => {
    const table = new SimpleTokenTable({ ttlMs: 1000, maxTokens: 10, maxTokensPerUser: 2 });
    const first = table.assign({ prefix: P1, index: 1, username: 'u', nowMs: 0 }).token;
    const second = table.assign({ prefix: P2, index: 2, username: 'u', nowMs: 0 }).token;
    table.refresh([first], 500); // first now expires later than second
    const third = table.assign({ prefix: P3, index: 3, username: 'u', nowMs: 600 });
    expect(third.evictedCount).toBe(1);
    expect(table.lookup(second, 600)).toBeUndefined();
    expect(table.lookup(first, 600)).toBeDefined();
    expect(table.countOf('u')).toBe(2);
  });

  it('fails with TABLE_FULL at maxTokens and changes nothing', () => {
    const table = new SimpleTokenTable({ maxTokens: 2, maxTokensPerUser: 2 });
    table.assign({ prefix: P1, index: 1, username: 'a', nowMs: 0 });
    table.assign({ prefix: P2, index: 2, username: 'b', nowMs: 0 });
    const before = table.snapshot();
    const error = (() => {
      try {
        table.assign({ prefix: P3, index: 3, username: 'c', nowMs: 0 });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(hasCode(error, 'ERR_AUTH_SIMPLE_TOKEN_TABLE_FULL')).toBe(true);
    expect((error as SimpleTokenError).index).toBe(3);
    expect((error as Error).message).not.toContain(P3);
    expect(table.snapshot()).toEqual(before);
  });

  it('validates its options instead of falling back to defaults', () => {
    expect(() => resolveSimpleTokenTableOptions({ ttlMs: 0 })).toThrow(TypeError);
    expect(() => resolveSimpleTokenTableOptions({ ttlMs: -300 })).toThrow(TypeError);
    expect(() => resolveSimpleTokenTableOptions({ maxTokens: 1.5 })).toThrow(TypeError);
    expect(() => resolveSimpleTokenTableOptions({ maxTokens: 1, maxTokensPerUser: 2 })).toThrow(TypeError);
    expect(() => resolveSimpleTokenTableOptions({ ttlMs: 366 * 24 * 3600 * 1000 })).toThrow(TypeError);
    expect(resolveSimpleTokenTableOptions().ttlMs).toBe(300_000);
    expect(simpleTokenRefreshIntervalMs(300_000)).toBe(75_000);
  });
});

describe('SimpleTokenTable: snapshots', () => {
  it('restores a table equal to the original', () => {
    const table = new SimpleTokenTable({ ttlMs: 1000 });
    table.assign({ prefix: P2, index: 9, username: 'b', nowMs: 5 });
    table.assign({ prefix: P1, index: 4, username: 'a', nowMs: 3 });
    const restored = SimpleTokenTable.restore(table.snapshot(), { ttlMs: 1000 });
    expect(restored.snapshot()).toEqual(table.snapshot());
    expect(restored.snapshot().map((r) => r.index)).toEqual([4, 9]);
    expect(restored.lookup(`${P2}.9`, 6)?.username).toBe('b');
  });

  const good: SimpleTokenRecord = { token: `${P1}.4`, username: 'a', index: 4, expiresAtMs: 10 };
  it.each([
    ['index differs from the token suffix', [{ ...good, index: 5 }]],
    ['malformed token', [{ ...good, token: 'nope' }]],
    ['empty user', [{ ...good, username: '' }]],
    ['negative expiry', [{ ...good, expiresAtMs: -1 }]],
    ['duplicate', [good, good]],
    ['over the per-user bound', [good, { ...good, token: `${P2}.5`, index: 5 }]],
  ])('rejects a snapshot with %s', (_name, records) => {
    expect(codeOf(() => SimpleTokenTable.restore(records, { maxTokens: 10, maxTokensPerUser: 1 }))).toBe('ERR_AUTH_SIMPLE_TOKEN_MALFORMED');
  });
});

// Replication: replicas apply the same entries in the same order. Two tables fed the same random
// operation log, one of them rebuilt from a snapshot half way, must end identical; and both must
// agree with a brute-force model of the TTL rules.
type Op =
  | { kind: 'assign'; user: number; prefix: number; dtMs: number }
  | { kind: 'refresh'; pick: number; dtMs: number }
  | { kind: 'expire'; dtMs: number }
  | { kind: 'invalidate'; user: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('assign' as const), user: fc.nat(3), prefix: fc.nat(40), dtMs: fc.nat(400) }),
  fc.record({ kind: fc.constant('refresh' as const), pick: fc.nat(50), dtMs: fc.nat(400) }),
  fc.record({ kind: fc.constant('expire' as const), dtMs: fc.nat(400) }),
  fc.record({ kind: fc.constant('invalidate' as const), user: fc.nat(3) }),
);

function prefixOf(n: number): string {
  return 'abcdefghijklmnop'.slice(0, 14) + String.fromCharCode(65 + (n % 26)) + String.fromCharCode(97 + Math.floor(n / 26));
}

interface ModelRecord {
  user: string;
  expiresAtMs: number;
  index: number;
}

function applyOps(ops: readonly Op[], restoreAt: number | undefined): { table: SimpleTokenTable; model: Map<string, ModelRecord> } {
  const options = { ttlMs: 1000, maxTokens: 50, maxTokensPerUser: 5 };
  let table = new SimpleTokenTable(options);
  const model = new Map<string, ModelRecord>();
  let nowMs = 0;
  let index = 0;
  ops.forEach((op, position) => {
    if (position === restoreAt) table = SimpleTokenTable.restore(table.snapshot(), options);
    if ('dtMs' in op) nowMs += op.dtMs;
    if (op.kind === 'assign') {
      index += 1;
      const user = `user${op.user}`;
      table.assign({ prefix: prefixOf(op.prefix), index, username: user, nowMs });
      const mine = [...model.entries()].filter(([, r]) => r.user === user);
      if (mine.length >= options.maxTokensPerUser) {
        mine.sort(([, x], [, y]) => x.expiresAtMs - y.expiresAtMs || x.index - y.index);
        model.delete(mine[0]![0]);
      }
      model.set(`${prefixOf(op.prefix)}.${index}`, { user, expiresAtMs: nowMs + options.ttlMs, index });
    } else if (op.kind === 'refresh') {
      const tokens = [...model.keys()];
      const token = tokens.length === 0 ? 'none' : tokens[op.pick % tokens.length]!;
      table.refresh([token], nowMs);
      const record = model.get(token);
      if (record && record.expiresAtMs > nowMs) record.expiresAtMs = Math.max(record.expiresAtMs, nowMs + options.ttlMs);
    } else if (op.kind === 'expire') {
      table.expire(nowMs);
      for (const [token, record] of [...model]) if (record.expiresAtMs <= nowMs) model.delete(token);
    } else {
      table.invalidateUser(`user${op.user}`);
      for (const [token, record] of [...model]) if (record.user === `user${op.user}`) model.delete(token);
    }
  });
  return { table, model };
}

describe('SimpleTokenTable: replica determinism (property)', () => {
  it('same log ⇒ same table, with or without a snapshot restore, matching a brute-force model', () => {
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 120 }), fc.nat(120), (ops, restoreAt) => {
        const plain = applyOps(ops, undefined);
        const restored = applyOps(ops, restoreAt);
        expect(restored.table.snapshot()).toEqual(plain.table.snapshot());
        const fromModel = [...plain.model.entries()]
          .map(([token, r]) => ({ token, username: r.user, index: r.index, expiresAtMs: r.expiresAtMs }))
          .sort((a, b) => a.index - b.index);
        expect(plain.table.snapshot()).toEqual(fromModel);
      }),
      { numRuns: 300, seed: 20240611 },
    );
  });
});
