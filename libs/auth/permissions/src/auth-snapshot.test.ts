import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { equalBytes, toHex, utf8 } from '@ward/shared/bytes';
import { AuthStore } from './auth-store';
import { AuthError } from './errors';
import type { Access } from './permission';

const NONE = new Uint8Array(0);
const USERS = ['root', 'u1', 'u2', 'ü3'];
const ROLES = ['root', 'r1', 'r2'];
const keyArb = fc.array(fc.constantFrom(0x00, 0x61, 0x62, 0xff), { minLength: 1, maxLength: 3 }).map((a) => Uint8Array.from(a));
const endArb = fc.oneof(fc.constant(NONE), fc.constant(Uint8Array.of(0)), keyArb);

/** One auth operation, applied by name so that the same sequence can run on several stores. */
type Step = [string, ...unknown[]];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.tuple(fc.constant('userAdd'), fc.constantFrom(...USERS), fc.boolean(), fc.uint8Array({ maxLength: 4 })),
  fc.tuple(fc.constant('userDelete'), fc.constantFrom(...USERS)),
  fc.tuple(fc.constant('userChangePassword'), fc.constantFrom(...USERS), fc.uint8Array({ maxLength: 4 })),
  fc.tuple(fc.constant('userGrantRole'), fc.constantFrom(...USERS), fc.constantFrom(...ROLES)),
  fc.tuple(fc.constant('userRevokeRole'), fc.constantFrom(...USERS), fc.constantFrom(...ROLES)),
  fc.tuple(fc.constant('roleAdd'), fc.constantFrom(...ROLES)),
  fc.tuple(fc.constant('roleDelete'), fc.constantFrom(...ROLES)),
  fc.tuple(fc.constant('roleGrantPermission'), fc.constantFrom(...ROLES), fc.constantFrom(0, 1, 2, 9), keyArb, endArb),
  fc.tuple(fc.constant('roleRevokePermission'), fc.constantFrom(...ROLES), keyArb, endArb),
  fc.tuple(fc.constant('authEnable')),
  fc.tuple(fc.constant('authDisable')),
);

function run(store: AuthStore, [name, ...args]: Step): string {
  try {
    switch (name) {
      case 'userAdd':
        store.userAdd({ name: args[0] as string, noPassword: args[1] as boolean, passwordHash: args[2] as Uint8Array });
        break;
      case 'roleGrantPermission':
        store.roleGrantPermission(args[0] as string, { permType: args[1] as number, key: args[2] as Uint8Array, rangeEnd: args[3] as Uint8Array });
        break;
      default:
        (store as unknown as Record<string, (...a: unknown[]) => void>)[name]!(...args);
    }
    return 'ok';
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

const queryArb = fc.record({ user: fc.constantFrom(...USERS), access: fc.constantFrom<Access>('read', 'write'), key: keyArb, end: endArb });

describe('auth store snapshot', () => {
  it('restores to identical bytes, hash and behaviour after random operation sequences', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), fc.array(stepArb, { maxLength: 10 }), fc.array(queryArb, { maxLength: 10 }), (steps, more, queries) => {
        const original = new AuthStore();
        for (const step of steps) run(original, step);
        const restored = AuthStore.restore(original.snapshot());
        restored.checkInvariants();
        expect(restored.snapshot()).toEqual(original.snapshot());
        expect(toHex(restored.stateHash())).toBe(toHex(original.stateHash()));
        for (const step of more) expect(run(restored, step)).toBe(run(original, step));
        expect(toHex(restored.stateHash())).toBe(toHex(original.stateHash()));
        for (const q of queries) {
          const identity = { username: q.user, authRevision: original.revision };
          expect(restored.checkAccess(identity, q.access, q.key, q.end)).toBe(original.checkAccess(identity, q.access, q.key, q.end));
          expect(restored.isAdminPermitted(q.user)).toBe(original.isAdminPermitted(q.user));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('gives the same bytes for the same state reached in a different order', () => {
    const a = new AuthStore();
    const b = new AuthStore();
    a.userAdd({ name: 'x', passwordHash: NONE });
    a.userAdd({ name: 'y', passwordHash: NONE });
    b.userAdd({ name: 'y', passwordHash: NONE });
    b.userAdd({ name: 'x', passwordHash: NONE });
    expect(equalBytes(a.snapshot(), b.snapshot())).toBe(true);
    b.roleAdd('r');
    expect(equalBytes(a.snapshot(), b.snapshot())).toBe(false);
  });

  it('rejects random bytes and damaged snapshots with ERR_AUTH_SNAPSHOT_INVALID only', () => {
    const store = new AuthStore();
    store.userAdd({ name: 'root', passwordHash: utf8('$2b$04$abc') });
    store.userGrantRole('root', 'root');
    store.roleAdd('r');
    store.roleGrantPermission('r', { permType: 1, key: utf8('a'), rangeEnd: utf8('b') });
    store.userGrantRole('root', 'r');
    const valid = store.snapshot();
    const damaged = fc.oneof(
      fc.uint8Array({ maxLength: 80 }),
      fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 })).map(([at, flip]) => {
        const copy = valid.slice();
        copy[at]! ^= flip;
        return copy;
      }),
      fc.nat(valid.length - 1).map((length) => valid.slice(0, length)),
    );
    fc.assert(
      fc.property(damaged, (bytes) => {
        try {
          const restored = AuthStore.restore(bytes);
          expect(restored.snapshot()).toEqual(bytes); // anything accepted is canonical
        } catch (error) {
          expect(error).toBeInstanceOf(AuthError);
          expect((error as AuthError).code).toBe('ERR_AUTH_SNAPSHOT_INVALID');
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses non-canonical content: unsorted users, unknown role references, invalid ranges', () => {
    const store = new AuthStore();
    store.userAdd({ name: 'a', passwordHash: NONE });
    store.userAdd({ name: 'b', passwordHash: NONE });
    const bytes = store.snapshot();
    const swapped = bytes.slice();
    const at = bytes.indexOf(0x61);
    swapped[at] = 0x62;
    swapped[bytes.indexOf(0x62, at + 1)] = 0x61;
    expect(() => AuthStore.restore(swapped)).toThrow(AuthError);
    expect(() => AuthStore.restore(bytes.slice(0, bytes.length - 1))).toThrow(AuthError);
    expect(() => AuthStore.restore(Uint8Array.of(...bytes, 0))).toThrow(AuthError);
  });
});
