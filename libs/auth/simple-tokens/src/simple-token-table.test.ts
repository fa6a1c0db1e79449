import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SimpleTokenTable } from './simple-token-table';

const PREFIX = 'abcdefghijklmnop';

function ownersOf(table: SimpleTokenTable): Map<string, string> {
  return new Map(table.entries().map(([token, owner]) => [token, owner.username]));
}

function countsOf(table: SimpleTokenTable): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [, owner] of table.entries()) counts.set(owner.username, (counts.get(owner.username) ?? 0) + 1);
  return counts;
}

describe('SimpleTokenTable bounds', () => {
  it('a user at its bound loses its own oldest token, nobody else’s', () => {
    const table = new SimpleTokenTable(100, 3);
    table.assign(PREFIX, 1, 'alice');
    for (let index = 2; index <= 50; index++) table.assign(PREFIX, index, 'mallory');
    expect(table.resolve(`${PREFIX}.1`)).toEqual({ username: 'alice', index: 1 });
    expect(table.countOf('mallory')).toBe(3);
    expect([...table.tokens()].sort()).toEqual([`${PREFIX}.1`, `${PREFIX}.48`, `${PREFIX}.49`, `${PREFIX}.50`].sort());
  });

  it('the total bound takes from the user holding the most (ties: the older), not the oldest token', () => {
    const table = new SimpleTokenTable(6, 4);
    table.assign(PREFIX, 1, 'alice'); // the oldest token of all
    for (let index = 2; index <= 4; index++) table.assign(PREFIX, index, 'bob');
    table.assign(PREFIX, 5, 'carol');
    table.assign(PREFIX, 6, 'carol');
    table.assign(PREFIX, 7, 'dave'); // full: bob (3) loses its oldest, index 2
    expect(table.resolve(`${PREFIX}.2`)).toBeUndefined();
    expect(table.resolve(`${PREFIX}.1`)).toBeDefined();
    table.assign(PREFIX, 8, 'dave'); // bob 2 and carol 2: bob's oldest (3) is older than carol's (5)
    expect(table.resolve(`${PREFIX}.3`)).toBeUndefined();
    expect(countsOf(table)).toEqual(new Map([['alice', 1], ['bob', 1], ['carol', 2], ['dave', 2]]));
  });

  it('a restored user above the per-user bound is trimmed to it, oldest first, at its next token', () => {
    const table = new SimpleTokenTable(100, 3);
    for (const index of [9, 3, 7, 5, 1]) table.restore(`${PREFIX}.${index}`, { username: 'u', index });
    expect(table.countOf('u')).toBe(5);
    table.assign(PREFIX, 10, 'u');
    expect([...table.tokens()].sort()).toEqual([`${PREFIX}.10`, `${PREFIX}.7`, `${PREFIX}.9`].sort());
  });

  it('invalidateUser and expire keep the per-user index consistent', () => {
    const table = new SimpleTokenTable(10, 5);
    table.assign(PREFIX, 1, 'a');
    table.assign(PREFIX, 2, 'a');
    table.assign(PREFIX, 3, 'b');
    table.expire([`${PREFIX}.1`, `${PREFIX}.99`]);
    expect(table.countOf('a')).toBe(1);
    table.invalidateUser('a');
    expect(table.countOf('a')).toBe(0);
    expect(table.size).toBe(1);
  });

  type Op = { kind: 'assign'; user: number } | { kind: 'expire'; pick: number } | { kind: 'invalidate'; user: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant('assign' as const), user: fc.integer({ min: 0, max: 5 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('invalidate' as const), user: fc.integer({ min: 0, max: 5 }) }) },
  );

  it('property: an assignment never evicts a token of a user holding fewer tokens than the assigning user, and stays within both bounds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.array(op, { maxLength: 200 }), (maxTokens, perUser, ops) => {
        const table = new SimpleTokenTable(maxTokens, perUser);
        const bound = Math.min(perUser, maxTokens);
        let index = 1;
        for (const step of ops) {
          if (step.kind === 'expire') {
            const live = [...table.tokens()].sort();
            if (live.length > 0) table.expire([live[step.pick % live.length]!]);
            continue;
          }
          if (step.kind === 'invalidate') {
            table.invalidateUser(`u${step.user}`);
            continue;
          }
          const user = `u${step.user}`;
          const before = ownersOf(table);
          const counts = countsOf(table);
          const full = table.size >= maxTokens;
          const token = table.assign(PREFIX, index, user);
          index += 1;
          expect(table.resolve(token)).toEqual({ username: user, index: index - 1 });
          expect(table.size).toBeLessThanOrEqual(maxTokens);
          expect(table.countOf(user)).toBeLessThanOrEqual(bound);
          const evicted = [...before.keys()].filter((t) => table.resolve(t) === undefined);
          expect(evicted.length).toBeLessThanOrEqual(1);
          for (const gone of evicted) {
            const owner = before.get(gone)!;
            // The evicted token is its owner's oldest.
            const indexOf = (t: string): number => Number(t.split('.')[1]);
            const ownersOldest = Math.min(...[...before].filter(([, u]) => u === owner).map(([t]) => indexOf(t)));
            expect(indexOf(gone)).toBe(ownersOldest);
            if (owner !== user) {
              expect(full).toBe(true);
              expect(counts.get(owner)!).toBeGreaterThanOrEqual(counts.get(user) ?? 0);
            }
          }
        }
        // The snapshot's entries restore to a table that behaves the same.
        const restored = new SimpleTokenTable(maxTokens, perUser);
        for (const [token, owner] of table.entries()) restored.restore(token, owner);
        expect(restored.entries()).toEqual(table.entries());
        table.assign(PREFIX, index, 'u0');
        restored.assign(PREFIX, index, 'u0');
        expect(restored.entries()).toEqual(table.entries());
      }),
      { seed: 0x21_7070, numRuns: 500 },
    );
  });
});
