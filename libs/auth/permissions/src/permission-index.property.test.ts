// The store's incremental permission indexes against a naive reference: a literal model of etcd's
// algorithm (pkg/adt interval comparison with the "empty means +∞" affine order, Intersects for a
// key, Contains for a range), rebuilt from scratch for every check from a plain model of roles and
// grants. Random grants, revokes, role grants/revokes/deletes, then random key and range checks.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, concatBytes, prefixRangeEnd } from '@ward/shared/bytes';
import { AuthStore, type AuthIdentity } from './auth-store';
import { PermissionType, type Access } from './permission';

// ---- the reference ---------------------------------------------------------------------------

/** etcd's BytesAffineComparable: the empty string is +∞. */
function affine(a: Uint8Array, b: Uint8Array): number {
  if (a.length === 0) return b.length === 0 ? 0 : 1;
  if (b.length === 0) return -1;
  return compareBytes(a, b);
}

interface Ivl {
  readonly begin: Uint8Array;
  readonly end: Uint8Array;
}

/** etcd's Interval.Compare: 0 when the query "overlaps" the node interval. */
function ivlCompare(query: Ivl, node: Ivl): number {
  if (affine(query.begin, node.begin) < 0 && affine(query.end, node.begin) <= 0) return -1;
  if (affine(query.begin, node.end) >= 0) return 1;
  return 0;
}

function permInterval(key: Uint8Array, rangeEnd: Uint8Array): Ivl {
  if (rangeEnd.length === 0) return { begin: key, end: concatBytes(key, Uint8Array.of(0)) };
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { begin: key, end: new Uint8Array(0) };
  return { begin: key, end: rangeEnd };
}

function referencePermits(intervals: readonly Ivl[], key: Uint8Array, rangeEnd: Uint8Array): boolean {
  if (rangeEnd.length === 0) {
    const point = permInterval(key, new Uint8Array(0));
    return intervals.some((node) => ivlCompare(point, node) === 0);
  }
  const query: Ivl = { begin: key, end: rangeEnd.length === 1 && rangeEnd[0] === 0 ? new Uint8Array(0) : rangeEnd };
  const hits = intervals.filter((node) => ivlCompare(query, node) === 0).sort((a, b) => affine(a.begin, b.begin));
  if (hits.length === 0) return false;
  let maxEnd = hits[0]!.end;
  for (const hit of hits.slice(1)) {
    if (affine(maxEnd, hit.begin) < 0) return false;
    if (affine(hit.end, maxEnd) > 0) maxEnd = hit.end;
  }
  return affine(maxEnd, query.end) >= 0 && affine(hits[0]!.begin, query.begin) <= 0;
}

// ---- the plain model of roles and grants ------------------------------------------------------

interface ModelPerm {
  permType: number;
  key: Uint8Array;
  rangeEnd: Uint8Array;
}

class Model {
  readonly roles = new Map<string, ModelPerm[]>();
  readonly userRoles = new Map<string, Set<string>>();

  intervals(user: string, access: Access): Ivl[] {
    const out: Ivl[] = [];
    for (const role of this.userRoles.get(user) ?? []) {
      for (const perm of this.roles.get(role) ?? []) {
        const read = perm.permType === PermissionType.READ || perm.permType === PermissionType.READWRITE;
        const write = perm.permType === PermissionType.WRITE || perm.permType === PermissionType.READWRITE;
        if ((access === 'read' && read) || (access === 'write' && write)) out.push(permInterval(perm.key, perm.rangeEnd));
      }
    }
    return out;
  }
}

// ---- random operations ------------------------------------------------------------------------

const BYTES = [0x00, 0x61, 0x62, 0x63, 0xff];
const keyArb = fc.array(fc.constantFrom(...BYTES), { minLength: 1, maxLength: 3 }).map((a) => Uint8Array.from(a));
const rangeEndArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(new Uint8Array(0)) },
  { weight: 1, arbitrary: fc.constant(Uint8Array.of(0)) },
  { weight: 4, arbitrary: keyArb },
);
/** Ten checks per user and access type: enough (≥ 8 since the last change) to build the views. */
const WARM_UP_KEYS = BYTES.map((b) => Uint8Array.of(b));
const WARM_UP_END = Uint8Array.of(0xff, 0xff, 0xff);
const ROLES = ['r1', 'r2', 'r3'];
const USERS = ['u1', 'u2'];
const roleArb = fc.constantFrom(...ROLES);
const userArb = fc.constantFrom(...USERS);

type Op =
  | { kind: 'grant'; role: string; permType: number; key: Uint8Array; rangeEnd: Uint8Array }
  | { kind: 'revoke'; role: string; pick: number }
  | { kind: 'userGrant' | 'userRevoke'; user: string; role: string }
  | { kind: 'roleDelete' | 'roleAdd'; role: string };

/** A key with a range end: any, or the key's prefix end (etcdctl --prefix), often. */
const grantRangeArb = fc.oneof(
  fc.record({ key: keyArb, rangeEnd: rangeEndArb }),
  keyArb.map((key) => ({ key, rangeEnd: prefixRangeEnd(key) })),
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({ role: roleArb, permType: fc.constantFrom(0, 1, 2, 7), range: grantRangeArb })
      .map(({ role, permType, range }) => ({ kind: 'grant' as const, role, permType, ...range })),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('revoke' as const), role: roleArb, pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('userGrant' as const, 'userRevoke' as const), user: userArb, role: roleArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('roleDelete' as const, 'roleAdd' as const), role: roleArb }) },
);

const checkArb = fc
  .record({
    user: userArb,
    access: fc.constantFrom<Access>('read', 'write'),
    key: fc.oneof(keyArb, fc.constant(new Uint8Array(0))),
    rangeEnd: rangeEndArb,
    prefixEnd: fc.boolean(),
  })
  .map(({ prefixEnd, ...check }) => (prefixEnd && check.key.length > 0 ? { ...check, rangeEnd: prefixRangeEnd(check.key) } : check));

function setUp(): { store: AuthStore; model: Model } {
  const store = new AuthStore();
  const model = new Model();
  store.userAdd({ name: 'root', passwordHash: new Uint8Array(0), noPassword: true });
  store.userGrantRole('root', 'root');
  for (const user of USERS) {
    store.userAdd({ name: user, passwordHash: new Uint8Array(0), noPassword: true });
    model.userRoles.set(user, new Set());
  }
  for (const role of ROLES) {
    store.roleAdd(role);
    model.roles.set(role, []);
  }
  store.authEnable();
  return { store, model };
}

/** Applies `op` to both; returns whether it succeeded (and asserts both agree on that). */
function applyOp(store: AuthStore, model: Model, op: Op): void {
  const expectSuccess = modelApply(model, op);
  let succeeded = true;
  try {
    storeApply(store, op);
  } catch {
    succeeded = false;
  }
  expect(succeeded).toBe(expectSuccess);
}

function storeApply(store: AuthStore, op: Op): void {
  if (op.kind === 'grant') store.roleGrantPermission(op.role, { permType: op.permType, key: op.key, rangeEnd: op.rangeEnd });
  else if (op.kind === 'revoke') {
    const perms = store.roleGet(op.role);
    const target = perms.length === 0 ? { key: Uint8Array.of(1), rangeEnd: new Uint8Array(0) } : perms[op.pick % perms.length]!;
    store.roleRevokePermission(op.role, target.key, target.rangeEnd);
  } else if (op.kind === 'userGrant') store.userGrantRole(op.user, op.role);
  else if (op.kind === 'userRevoke') store.userRevokeRole(op.user, op.role);
  else if (op.kind === 'roleDelete') store.roleDelete(op.role);
  else store.roleAdd(op.role);
}

function modelApply(model: Model, op: Op): boolean {
  const perms = 'role' in op ? model.roles.get(op.role) : undefined;
  switch (op.kind) {
    case 'grant': {
      const valid = op.rangeEnd.length === 0 || compareBytes(op.key, op.rangeEnd) < 0 || (op.rangeEnd.length === 1 && op.rangeEnd[0] === 0);
      if (!valid || perms === undefined) return false;
      const same = perms.find((p) => compareBytes(p.key, op.key) === 0 && compareBytes(p.rangeEnd, op.rangeEnd) === 0);
      if (same) same.permType = op.permType;
      else perms.push({ permType: op.permType, key: op.key, rangeEnd: op.rangeEnd });
      return true;
    }
    case 'revoke': {
      if (perms === undefined || perms.length === 0) return false;
      const sorted = [...perms].sort((a, b) => compareBytes(a.key, b.key) || compareBytes(a.rangeEnd, b.rangeEnd));
      perms.splice(perms.indexOf(sorted[op.pick % sorted.length]!), 1);
      return true;
    }
    case 'userGrant':
      if (perms === undefined) return false;
      model.userRoles.get(op.user)!.add(op.role);
      return true;
    case 'userRevoke':
      return model.userRoles.get(op.user)!.delete(op.role);
    case 'roleDelete':
      if (perms === undefined) return false;
      model.roles.delete(op.role);
      for (const roles of model.userRoles.values()) roles.delete(op.role);
      return true;
    case 'roleAdd':
      if (perms !== undefined) return false;
      model.roles.set(op.role, []);
      return true;
  }
}

describe('permission index against the naive etcd reference', () => {
  it('agrees on every key and range check over random grants and revokes (10,000 sequences)', () => {
    let checks = 0;
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 25 }), fc.array(opArb, { maxLength: 5 }), fc.array(checkArb, { minLength: 1, maxLength: 8 }), (ops, later, queries) => {
        const { store, model } = setUp();
        for (const op of ops) applyOp(store, model, op);
        store.checkInvariants();
        const identity = (username: string): AuthIdentity => ({ username, authRevision: store.revision });
        const checkAll = (): void => {
          for (const q of queries) {
            const expected = referencePermits(model.intervals(q.user, q.access), q.key, q.rangeEnd);
            const actual = store.checkAccess(identity(q.user), q.access, q.key, q.rangeEnd);
            expect(actual === null).toBe(expected);
            checks++;
          }
        };
        const warmUp = (): void => {
          for (const user of USERS) {
            for (const access of ['read', 'write'] as const) {
              for (const key of WARM_UP_KEYS) {
                store.checkAccess(identity(user), access, key, new Uint8Array(0));
                store.checkAccess(identity(user), access, key, WARM_UP_END);
              }
            }
          }
        };
        // From the fresh indexes, again once enough queries have built the flat views, then after
        // later changes (which drop the views) before and after they are rebuilt.
        checkAll();
        warmUp();
        checkAll();
        for (const op of later) applyOp(store, model, op);
        checkAll();
        warmUp();
        checkAll();
      }),
      { numRuns: 10_000 },
    );
    expect(checks).toBeGreaterThanOrEqual(10_000);
  });
});
