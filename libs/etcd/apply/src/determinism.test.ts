// Replica determinism: the same entries give byte-identical state and equal hashes; a snapshot
// restores to the same hash and behaves identically afterwards; damaged snapshots are refused.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Applier } from './applier';
import { decodeApplyRequest, encodeApplyRequest } from './codec/entry-codec';
import { deleteRangeRequest, putRequest, rangeRequest, txnRequest } from './codec/testing';
import { ApplyError } from './errors';
import type { ApplyOperation, ApplyRequest } from './request';
import type { ApplyResult } from './response';
import { NONE, fakeHash } from './testing';
import { splitBytes } from '@ward/shared/bytes';

const USERS = ['root', 'u1', 'u2'];
const ROLES = ['root', 'r1', 'r2'];
const smallKey = fc.constantFrom('a', 'b', 'c', 'ab').map((k) => new TextEncoder().encode(k));

const plainPut = fc.record({
  key: smallKey,
  value: fc.uint8Array({ maxLength: 3 }),
  lease: fc.constantFrom(0n, 0n, 1n, 2n),
  prevKv: fc.boolean(),
});
const plainRange = fc.record({ key: smallKey, rangeEnd: fc.constantFrom(NONE, Uint8Array.of(0), new TextEncoder().encode('c')), revision: fc.constantFrom(0, 0, 2) });

const operation: fc.Arbitrary<ApplyOperation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('put' as const), request: plainPut }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('put' as const), request: putRequest.map((p) => ({ ...p, lease: p.lease === 1n || p.lease === 2n ? p.lease : 0n })) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('range' as const), request: plainRange }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('range' as const), request: rangeRequest }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('deleteRange' as const), request: deleteRangeRequest }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('txn' as const), request: txnRequest }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('compact' as const), request: fc.record({ revision: fc.integer({ min: 1, max: 8 }), physical: fc.boolean() }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('leaseGrant' as const), request: fc.record({ id: fc.constantFrom(1n, 2n), ttlSeconds: fc.integer({ min: 1, max: 100 }) }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('leaseRevoke' as const), request: fc.record({ id: fc.constantFrom(1n, 2n) }) }) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'authEnable' as const }, { type: 'authEnable' as const }, { type: 'authDisable' as const }, { type: 'authStatus' as const }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('authenticate' as const), request: fc.record({ name: fc.constantFrom(...USERS), simpleTokenPrefix: fc.constant('abcdefghijklmnop') }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('userAdd' as const), request: fc.record({ name: fc.constantFrom(...USERS), passwordHash: fc.constant(fakeHash(9)), noPassword: fc.boolean() }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('userDelete' as const, 'userGet' as const), request: fc.record({ name: fc.constantFrom(...USERS) }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('userChangePassword' as const), request: fc.record({ name: fc.constantFrom(...USERS), passwordHash: fc.constant(fakeHash(10)) }) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('userGrantRole' as const), request: fc.record({ user: fc.constantFrom(...USERS), role: fc.constantFrom(...ROLES) }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('userRevokeRole' as const), request: fc.record({ name: fc.constantFrom(...USERS), role: fc.constantFrom(...ROLES) }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('roleAdd' as const), request: fc.record({ name: fc.constantFrom(...ROLES) }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('roleDelete' as const, 'roleGet' as const), request: fc.record({ role: fc.constantFrom(...ROLES) }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('roleGrantPermission' as const),
      request: fc.record({ name: fc.constantFrom(...ROLES), perm: fc.record({ permType: fc.constantFrom(0, 1, 2), key: smallKey, rangeEnd: fc.constantFrom(NONE, Uint8Array.of(0), new TextEncoder().encode('c')) }) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('roleRevokePermission' as const), request: fc.record({ role: fc.constantFrom(...ROLES), key: smallKey, rangeEnd: fc.constant(NONE) }) }) },
);

interface Step {
  readonly user: string;
  readonly revision: 'current' | 'zero' | 'old';
  readonly operation: ApplyOperation;
}

const step: fc.Arbitrary<Step> = fc.record({
  user: fc.constantFrom('', ...USERS),
  revision: fc.constantFrom('current', 'current', 'current', 'zero', 'old'),
  operation,
});

/** Root, u1 holding r1 = READWRITE [a, c), u2 with no role, auth on: most steps run checked. */
function seeded(): Applier {
  const applier = Applier.create();
  const setup: ApplyOperation[] = [
    { type: 'userAdd', request: { name: 'root', passwordHash: fakeHash(1), noPassword: false } },
    { type: 'userGrantRole', request: { user: 'root', role: 'root' } },
    { type: 'userAdd', request: { name: 'u1', passwordHash: fakeHash(2), noPassword: false } },
    { type: 'userAdd', request: { name: 'u2', passwordHash: null, noPassword: true } },
    { type: 'roleAdd', request: { name: 'r1' } },
    { type: 'roleGrantPermission', request: { name: 'r1', perm: { permType: 2, key: new TextEncoder().encode('a'), rangeEnd: new TextEncoder().encode('c') } } },
    { type: 'userGrantRole', request: { user: 'u1', role: 'r1' } },
    { type: 'authEnable' },
  ];
  for (const operation of setup) applyStep(applier, { user: '', revision: 'zero', operation });
  return applier;
}

/** Applies one step through the entry codec at the next index; returns a comparable summary. */
function applyStep(applier: Applier, s: Step): string {
  const current = applier.authView.revision;
  const authRevision = s.revision === 'current' ? current : s.revision === 'zero' ? 0 : Math.max(1, current - 1);
  const request: ApplyRequest = { header: { id: BigInt(applier.appliedIndex + 1), username: s.user, authRevision }, operation: s.operation };
  return summary(applier.apply(applier.appliedIndex + 1, decodeApplyRequest(encodeApplyRequest(request))));
}

function summary(result: ApplyResult): string {
  if (!result.ok) return `error:${result.error.wireName}`;
  return JSON.stringify(result, (_key, value: unknown) => {
    if (typeof value === 'bigint') return `${value}n`;
    if (value instanceof Uint8Array) return Array.from(value).join(',');
    return value;
  });
}

/** `bytes` cut at `cuts`, as Node Buffers (what gRPC hands over; their slice is a view, not a copy), each a copy. */
function cutInto(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  return splitBytes(bytes, cuts).map((piece) => Buffer.from(piece));
}

describe('determinism', () => {
  it('exercises successes and refusals of many kinds (generator sanity)', () => {
    const outcomes = new Map<string, number>();
    for (const steps of fc.sample(fc.array(step, { minLength: 60, maxLength: 60 }), { numRuns: 50, seed: 3 })) {
      const applier = seeded();
      for (const s of steps) {
        const result = applyStep(applier, s);
        const key = result.startsWith('error:') ? result : `ok:${s.operation.type}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    for (const expected of ['ok:put', 'ok:txn', 'ok:range', 'ok:authEnable', 'ok:roleGrantPermission', 'ok:leaseGrant', 'error:PermissionDenied', 'error:UserEmpty', 'error:AuthOldRevision']) {
      expect(outcomes.get(expected) ?? 0).toBeGreaterThan(0);
    }
  });

  it('two replicas applying the same entries answer alike and end byte-identical', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const a = seeded();
        const b = seeded();
        for (const s of steps) expect(applyStep(b, s)).toBe(applyStep(a, s));
        expect(b.snapshot()).toEqual(a.snapshot());
        expect(b.stateHash()).toBe(a.stateHash());
      }),
      { numRuns: 300 },
    );
  });

  it('snapshot → restore gives the same hash and identical behaviour afterwards', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.array(step, { maxLength: 30 }), (before, after) => {
        const original = seeded();
        for (const s of before) applyStep(original, s);
        const restored = Applier.restore(original.snapshot());
        expect(restored.stateHash()).toBe(original.stateHash());
        expect(restored.appliedIndex).toBe(original.appliedIndex);
        for (const s of after) expect(applyStep(restored, s)).toBe(applyStep(original, s));
        expect(restored.snapshot()).toEqual(original.snapshot());
      }),
      { numRuns: 300 },
    );
  });

  it('a snapshot pushed in pieces (Applier.decoder) restores what restore does, wherever it is cut', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.array(fc.nat(3000), { maxLength: 10 }), fc.array(step, { maxLength: 20 }), (before, cuts, after) => {
        const original = seeded();
        for (const s of before) applyStep(original, s);
        const bytes = original.snapshot();
        const decoder = Applier.decoder();
        for (const piece of cutInto(bytes, cuts)) {
          decoder.push(piece);
          piece.fill(0xee); // the caller's buffer, reused: nothing may still point into it
        }
        const restored = decoder.finish();
        expect(restored.stateHash()).toBe(original.stateHash());
        expect(restored.appliedIndex).toBe(original.appliedIndex);
        expect(Buffer.from(restored.snapshot()).equals(Buffer.from(bytes))).toBe(true);
        // The key space's section, found by the decoder, between the parts encoded around it: the snapshot again.
        const section = decoder.keySpaceSection!;
        const around = restored.snapshotAroundKeySpace(section.length);
        expect(around.head.length).toBe(section.offset);
        expect(Buffer.concat([around.head, bytes.subarray(section.offset, section.offset + section.length), around.tail]).equals(Buffer.from(bytes))).toBe(true);
        for (const s of after) expect(applyStep(restored, s)).toBe(applyStep(original, s));
      }),
      { numRuns: 300 },
    );
  });

  it('with checksumChecked the key space\'s CRC-32C is left to the caller: a wrong one is accepted, structural damage still refused', () => {
    const applier = seeded();
    for (const s of fc.sample(step, { numRuns: 40, seed: 11 })) applyStep(applier, s);
    const valid = applier.snapshot();
    const probe = Applier.decoder();
    probe.push(valid);
    const original = probe.finish();
    const section = probe.keySpaceSection!;
    // The key space's trailer: its CRC-32C, then a word no reader checks.
    const crcAt = section.offset + section.length - 8;
    const outcome = (bytes: Uint8Array, checksumChecked: boolean): string => {
      try {
        const decoder = Applier.decoder({}, { checksumChecked });
        decoder.push(bytes);
        return decoder.finish().stateHash();
      } catch (error) {
        return error instanceof ApplyError ? error.code : `crash: ${String(error)}`;
      }
    };
    const wrongCrc = valid.slice();
    wrongCrc[crcAt]! ^= 0x40;
    expect(outcome(wrongCrc, false)).toBe('ERR_APPLY_SNAPSHOT_INVALID');
    expect(outcome(wrongCrc, true)).toBe(original.stateHash());
    // A key space cut short, or garbage: refused either way, never a crash.
    const short = Buffer.concat([valid.subarray(0, section.offset + 20), valid.subarray(section.offset + section.length)]);
    expect(outcome(short, true)).toBe('ERR_APPLY_SNAPSHOT_INVALID');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (garbage) => {
        const spliced = Buffer.concat([valid.subarray(0, section.offset), garbage, valid.subarray(section.offset + section.length)]);
        expect(outcome(spliced, true)).toBe(garbage.length === section.length && Buffer.from(garbage).equals(valid.subarray(section.offset, section.offset + section.length)) ? original.stateHash() : 'ERR_APPLY_SNAPSHOT_INVALID');
      }),
      { numRuns: 200 },
    );
  });

  it('resolves the same simple tokens after a restore', () => {
    const applier = Applier.create();
    const root = (operation: ApplyOperation): ApplyResult =>
      applier.apply(applier.appliedIndex + 1, { header: { id: 1n, username: 'root', authRevision: applier.authView.revision }, operation });
    root({ type: 'userAdd', request: { name: 'root', passwordHash: fakeHash(1), noPassword: false } });
    root({ type: 'userGrantRole', request: { user: 'root', role: 'root' } });
    root({ type: 'authEnable' });
    const issued = root({ type: 'authenticate', request: { name: 'root', simpleTokenPrefix: 'QLVEbLmctfpktPPy' } });
    const token = issued.ok && issued.result.type === 'authenticate' ? issued.result.response.token : '';
    expect(token).toBe('QLVEbLmctfpktPPy.4');
    const restored = Applier.restore(applier.snapshot());
    expect(restored.resolveSimpleToken(token)).toEqual({ username: 'root', authRevision: applier.authView.revision });
    expect(restored.resolveSimpleToken('QLVEbLmctfpktPPy.5')).toBeUndefined();
  });

  it('refuses damaged snapshots with ERR_APPLY_SNAPSHOT_INVALID and nothing else', () => {
    const applier = seeded();
    for (const s of fc.sample(step, { numRuns: 40, seed: 7 })) applyStep(applier, s);
    const valid = applier.snapshot();
    const damaged = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 1, max: 255 })).map(([at, flip]) => {
        const copy = valid.slice();
        copy[at]! ^= flip;
        return copy;
      }),
      fc.nat(valid.length - 1).map((length) => valid.slice(0, length)),
    );
    const pieced = (bytes: Uint8Array, cuts: number[]): string => {
      try {
        const decoder = Applier.decoder();
        for (const piece of cutInto(bytes, cuts)) decoder.push(piece);
        return Buffer.from(decoder.finish().snapshot()).toString('hex');
      } catch (error) {
        return error instanceof ApplyError ? error.code : `crash: ${String(error)}`;
      }
    };
    fc.assert(
      fc.property(damaged, fc.array(fc.nat(valid.length), { maxLength: 6 }), (bytes, cuts) => {
        let restored: Applier;
        const inPieces = pieced(bytes, cuts);
        try {
          restored = Applier.restore(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(ApplyError);
          expect((error as ApplyError).code).toBe('ERR_APPLY_SNAPSHOT_INVALID');
          // Refused whole, refused in pieces.
          expect(inPieces).toBe('ERR_APPLY_SNAPSHOT_INVALID');
          return;
        }
        expect(inPieces).toBe(Buffer.from(restored.snapshot()).toString('hex'));
        // Accepted: a state these bytes encode exactly, or, when the damage is in the one slot
        // restore does not check (the word after the key space's CRC-32C: FNV-1a in format 1,
        // reserved in format 2), the original state.
        const again = Buffer.from(restored.snapshot());
        expect(again.equals(bytes) || again.equals(valid)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
