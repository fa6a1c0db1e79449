// Model-based check of the heap-driven Lessor against the scan-and-sort lessor it replaced: random
// sequences of leadership changes, applied grants and revokes, keep-alives, time-to-live queries,
// snapshot installs, out-of-band table changes, clock steps and expiry checks are run against both,
// and every answer must be identical.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Lessor, type LessorOptions } from './lessor';
import { LeaseTable as Table, ScanningLessor } from './testing/scanning-lessor';


const SLOTS = 10;

/** A lease id by slot; `retired` picks among the ids that left the table without revoked(). */
type Op =
  | { readonly kind: 'tick'; readonly ms: number }
  | { readonly kind: 'promote' }
  | { readonly kind: 'demote' }
  | { readonly kind: 'grantApplied'; readonly slot: number; readonly ttl: number; readonly lagMs: number }
  | { readonly kind: 'revokeApplied'; readonly slot: number }
  | { readonly kind: 'leftTableUnnoticed'; readonly slot: number }
  | { readonly kind: 'addedUnnoticed'; readonly slot: number; readonly ttl: number }
  | { readonly kind: 'snapshotInstalled'; readonly leases: ReadonlyArray<readonly [number, number]> }
  | { readonly kind: 'renew'; readonly slot: number; readonly retired: boolean; readonly lagMs: number }
  | { readonly kind: 'remaining'; readonly slot: number; readonly retired: boolean; readonly lagMs: number }
  | { readonly kind: 'expired' };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const ttl = fc.integer({ min: 1, max: 8 });
const lagMs = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 700 }), fc.integer({ min: 0, max: 3000 }));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.oneof(fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 12_000 }), fc.double({ min: 0, max: 1000, noNaN: true })) }), weight: 6 },
  { arbitrary: fc.constant({ kind: 'promote' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'demote' as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('grantApplied' as const), slot, ttl, lagMs }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('revokeApplied' as const), slot }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('leftTableUnnoticed' as const), slot }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('addedUnnoticed' as const), slot, ttl }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('snapshotInstalled' as const), leases: fc.array(fc.tuple(slot, ttl), { maxLength: SLOTS }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('renew' as const), slot, retired: fc.boolean(), lagMs }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('remaining' as const), slot, retired: fc.boolean(), lagMs }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'expired' as const }), weight: 6 },
);

const optionsArb: fc.Arbitrary<LessorOptions> = fc.record({
  minTtlSeconds: fc.constant(1),
  promoteExtendMs: fc.integer({ min: 0, max: 2000 }),
  maxRevokesPerSecond: fc.integer({ min: 1, max: 4 }),
  reproposeAfterMs: fc.constantFrom(0, 500, 1000, 2500, 3000),
});

/** Runs `ops` against both lessors, asserting identical answers after every step. */
function runAgainstReference(options: LessorOptions, ops: readonly Op[]): void {
  const table = new Table();
  const lessor = new Lessor(options, () => table);
  const reference = new ScanningLessor(options, () => table);
  let nowMs = 0;
  let nextFreshId = 1000n;
  // The id a slot stands for; a slot whose lease left the table unnoticed moves to a fresh id.
  // Re-granting such an id is not something the cluster does (a lease leaves the table by an
  // applied revoke, which calls revoked(), or by a snapshot, which calls resync()), and the
  // reference's answer for it would hinge on whether an earlier scan happened to pass over it.
  const ids = Array.from({ length: SLOTS }, (_, i) => BigInt(i + 1));
  const retired: bigint[] = [];
  const idOf = (index: number, fromRetired: boolean): bigint => (fromRetired && retired.length > 0 ? retired[index % retired.length]! : ids[index]!);

  const checkCounts = (): void => {
    expect(lessor.isPrimary).toBe(reference.isPrimary);
    // A lease that left the table unnoticed is forgotten when expired() reaches it, not on the
    // first call past its deadline: only such leases may still be counted.
    expect(lessor.trackedCount).toBeGreaterThanOrEqual(reference.trackedCount);
    expect(lessor.trackedCount).toBeLessThanOrEqual(reference.trackedCount + retired.length);
    if (retired.length === 0) expect(lessor.trackedCount).toBe(reference.trackedCount);
    expect(lessor.queuedCount).toBeLessThanOrEqual(3 * lessor.trackedCount);
  };

  for (const op of ops) {
    switch (op.kind) {
      case 'tick':
        nowMs += op.ms;
        break;
      case 'promote':
        lessor.promote(nowMs);
        reference.promote(nowMs);
        break;
      case 'demote':
        lessor.demote();
        reference.demote();
        break;
      case 'grantApplied': {
        const id = idOf(op.slot, false);
        table.ttl.set(id, op.ttl);
        lessor.granted(id, op.ttl, nowMs - op.lagMs);
        reference.granted(id, op.ttl, nowMs - op.lagMs);
        break;
      }
      case 'revokeApplied': {
        const id = idOf(op.slot, false);
        table.ttl.delete(id);
        lessor.revoked(id);
        reference.revoked(id);
        break;
      }
      case 'leftTableUnnoticed': {
        const id = idOf(op.slot, false);
        if (!table.ttl.delete(id)) break;
        retired.push(id);
        ids[op.slot] = nextFreshId++;
        break;
      }
      case 'addedUnnoticed':
        table.ttl.set(idOf(op.slot, false), op.ttl);
        break;
      case 'snapshotInstalled':
        table.ttl.clear();
        for (const [index, leaseTtl] of op.leases) table.ttl.set(idOf(index, false), leaseTtl);
        lessor.resync(nowMs);
        reference.resync(nowMs);
        break;
      case 'renew': {
        const id = idOf(op.slot, op.retired);
        expect(lessor.renew(id, nowMs - op.lagMs)).toEqual(reference.renew(id, nowMs - op.lagMs));
        break;
      }
      case 'remaining': {
        const id = idOf(op.slot, op.retired);
        expect(lessor.remainingMs(id, nowMs - op.lagMs)).toBe(reference.remainingMs(id, nowMs - op.lagMs));
        break;
      }
      case 'expired':
        expect(lessor.expired(nowMs)).toEqual(reference.expired(nowMs));
        break;
    }
    checkCounts();
  }

  // Drain: every lease expires; revoking what is handed out must leave both with nothing tracked.
  if (!lessor.isPrimary) return;
  nowMs += 1_000_000;
  for (let round = 0; round < 200 && (lessor.trackedCount > 0 || reference.trackedCount > 0); round++) {
    nowMs += Math.max(1000, options.reproposeAfterMs);
    const due = lessor.expired(nowMs);
    expect(due).toEqual(reference.expired(nowMs));
    for (const id of due) {
      table.ttl.delete(id);
      lessor.revoked(id);
      reference.revoked(id);
    }
    checkCounts();
  }
  expect(reference.trackedCount).toBe(0);
  expect(lessor.trackedCount).toBe(0);
  expect(lessor.queuedCount).toBe(0);
}

describe('Lessor against the scanning reference', () => {
  it('answers every call as the reference does', () => {
    fc.assert(
      fc.property(optionsArb, fc.array(opArb, { minLength: 1, maxLength: 150, size: 'max' }), (options, ops) => runAgainstReference(options, ops)),
      { numRuns: 2000 },
    );
  });

  it('starts as leader with a table of leases sharing deadlines', () => {
    fc.assert(
      fc.property(optionsArb, fc.array(fc.tuple(slot, fc.integer({ min: 1, max: 2 })), { maxLength: SLOTS }), fc.array(opArb, { maxLength: 80, size: 'max' }), (options, leases, ops) =>
        runAgainstReference(options, [
          { kind: 'snapshotInstalled', leases },
          { kind: 'promote' },
          ...ops,
        ]),
      ),
      { numRuns: 1000 },
    );
  });
});

describe('Lessor heaps', () => {
  it('keep the reproposal pause of a lease renewed with a time stamped before its revoke was proposed', () => {
    const table = new Table();
    const options: LessorOptions = { minTtlSeconds: 1, promoteExtendMs: 0, maxRevokesPerSecond: 1000, reproposeAfterMs: 3000 };
    const lessor = new Lessor(options, () => table);
    const reference = new ScanningLessor(options, () => table);
    table.ttl.set(1n, 2);
    for (const l of [lessor, reference]) {
      l.promote(0);
      l.granted(1n, 2, 0);
      expect(l.expired(2000)).toEqual([1n]);
      expect(l.renew(1n, 1500)).toEqual({ kind: 'renewed', ttlSeconds: 2 });
      expect(l.expired(3600)).toEqual([]); // due again (3500), still within the pause (until 5000)
      expect(l.expired(5000)).toEqual([1n]);
    }
  });

  it('stay within three entries per tracked lease under keep-alive traffic', () => {
    const table = new Table();
    const lessor = new Lessor({ minTtlSeconds: 1, promoteExtendMs: 0, maxRevokesPerSecond: 1000, reproposeAfterMs: 3000 }, () => table);
    for (let id = 1n; id <= 1000n; id++) table.ttl.set(id, 10);
    lessor.promote(0);
    let most = 0;
    for (let round = 1; round <= 100; round++) {
      for (let id = 1n; id <= 1000n; id++) {
        expect(lessor.renew(id, round * 50).kind).toBe('renewed');
        most = Math.max(most, lessor.queuedCount);
      }
      expect(lessor.expired(round * 50)).toEqual([]);
    }
    expect(lessor.trackedCount).toBe(1000);
    expect(most).toBeLessThanOrEqual(3000);
    expect(lessor.remainingMs(1n, 5000)).toBe(10_000);
  });

  it('drop the entries of revoked leases', () => {
    const table = new Table();
    const lessor = new Lessor({ minTtlSeconds: 1, promoteExtendMs: 0, maxRevokesPerSecond: 1000, reproposeAfterMs: 3000 }, () => table);
    for (let id = 1n; id <= 1000n; id++) table.ttl.set(id, 10);
    lessor.promote(0);
    for (let id = 1n; id <= 1000n; id++) {
      table.ttl.delete(id);
      lessor.revoked(id);
    }
    expect(lessor.trackedCount).toBe(0);
    expect(lessor.queuedCount).toBe(0);
  });
});
