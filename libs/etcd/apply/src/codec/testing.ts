// fast-check generators of fully specified ApplyRequests (every field present, as decoding yields
// them), shared by the codec and determinism tests. Test-only.
import fc from 'fast-check';
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '@ward/etcd/kv-store';
import type { ApplyOperation, ApplyRequest } from '../request';
import { fakeHash } from '../testing';

const bytes = fc.uint8Array({ maxLength: 6 });
const smallKey = fc.array(fc.constantFrom(0x00, 0x61, 0x62, 0x63, 0xff), { minLength: 1, maxLength: 3 }).map((a) => Uint8Array.from(a));
const rangeEnd = fc.oneof(fc.constant(new Uint8Array(0)), fc.constant(Uint8Array.of(0)), smallKey);
const int = fc.oneof(fc.integer({ min: -5, max: 50 }), fc.maxSafeInteger());
const int64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });
const name = fc.oneof(fc.constantFrom('root', 'u1', 'u2', 'r1', 'r2', ''), fc.string({ maxLength: 5 }));

export const rangeRequest: fc.Arbitrary<RangeRequest> = fc.record({
  key: smallKey,
  rangeEnd,
  limit: int,
  revision: int,
  sortOrder: fc.constantFrom('NONE', 'ASCEND', 'DESCEND'),
  sortTarget: fc.constantFrom('KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'),
  serializable: fc.boolean(),
  keysOnly: fc.boolean(),
  countOnly: fc.boolean(),
  minModRevision: int,
  maxModRevision: int,
  minCreateRevision: int,
  maxCreateRevision: int,
});

export const putRequest: fc.Arbitrary<PutRequest> = fc.record({
  key: smallKey,
  value: bytes,
  lease: fc.oneof(fc.constant(0n), fc.constantFrom(1n, 2n), int64),
  prevKv: fc.boolean(),
  ignoreValue: fc.boolean(),
  ignoreLease: fc.boolean(),
});

export const deleteRangeRequest: fc.Arbitrary<DeleteRangeRequest> = fc.record({ key: smallKey, rangeEnd, prevKv: fc.boolean() });

const compare: fc.Arbitrary<Compare> = fc.oneof(
  fc.record({ target: fc.constant('VERSION' as const), version: int }),
  fc.record({ target: fc.constant('CREATE' as const), createRevision: int }),
  fc.record({ target: fc.constant('MOD' as const), modRevision: int }),
  fc.record({ target: fc.constant('VALUE' as const), value: bytes }),
  fc.record({ target: fc.constant('LEASE' as const), lease: int64 }),
).chain((operand) =>
  fc.record({ result: fc.constantFrom('EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'), key: smallKey, rangeEnd }).map((base) => ({ ...base, ...operand }) as Compare),
);

export const txnRequest: fc.Arbitrary<TxnRequest> = fc.letrec<{ txn: TxnRequest; op: RequestOp }>((tie) => ({
  txn: fc.record({
    compare: fc.array(compare, { maxLength: 3 }),
    success: fc.array(tie('op'), { maxLength: 3 }),
    failure: fc.array(tie('op'), { maxLength: 3 }),
  }),
  op: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constant('range' as const), request: rangeRequest }),
    fc.record({ type: fc.constant('put' as const), request: putRequest }),
    fc.record({ type: fc.constant('deleteRange' as const), request: deleteRangeRequest }),
    fc.record({ type: fc.constant('txn' as const), request: tie('txn') as fc.Arbitrary<TxnRequest> }),
  ) as fc.Arbitrary<RequestOp>,
})).txn;

const hash = fc.oneof(fc.constant(null), fc.nat(1000).map((seed) => fakeHash(seed)));
const prefix = fc.stringMatching(/^[A-Za-z]{16}$/);
const perm = fc.record({ permType: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), key: bytes, rangeEnd: bytes });

const keyId = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);

export const applyOperation: fc.Arbitrary<ApplyOperation> = fc.oneof(
  fc.record({ type: fc.constant('range' as const), request: rangeRequest }),
  fc.record({ type: fc.constant('put' as const), request: putRequest }),
  fc.record({ type: fc.constant('deleteRange' as const), request: deleteRangeRequest }),
  fc.record({ type: fc.constant('txn' as const), request: txnRequest }),
  fc.record({ type: fc.constant('compact' as const), request: fc.record({ revision: int, physical: fc.boolean() }) }),
  fc.record({ type: fc.constant('leaseGrant' as const), request: fc.record({ id: int64, ttlSeconds: int }) }),
  fc.record({ type: fc.constant('leaseRevoke' as const), request: fc.record({ id: int64 }) }),
  fc.constantFrom(
    { type: 'authEnable' as const },
    { type: 'authDisable' as const },
    { type: 'authStatus' as const },
    { type: 'userList' as const },
    { type: 'roleList' as const },
    { type: 'signingKeyList' as const },
  ),
  fc.record({
    type: fc.constant('signingKeyPublish' as const),
    request: fc.record({
      key: fc.record({ keyId, alg: fc.constantFrom('EdDSA', 'ES256', 'RS256'), publicJwk: fc.string({ maxLength: 100 }), notBeforeSeconds: fc.nat(), retireAfterSeconds: fc.nat() }),
      nowSeconds: fc.nat(),
    }),
  }),
  fc.record({ type: fc.constant('signingKeyRevoke' as const), request: fc.record({ keyId }) }),
  fc.record({ type: fc.constant('authenticate' as const), request: fc.record({ name, simpleTokenPrefix: prefix }) }),
  fc.record({ type: fc.constant('simpleTokenExpire' as const), request: fc.record({ tokens: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }) }) }),
  fc.record({ type: fc.constant('userAdd' as const), request: fc.record({ name, passwordHash: hash, noPassword: fc.boolean() }) }),
  fc.record({ type: fc.constant('userChangePassword' as const), request: fc.record({ name, passwordHash: hash }) }),
  fc.record({ type: fc.constantFrom('userDelete' as const, 'userGet' as const, 'roleAdd' as const), request: fc.record({ name }) }),
  fc.record({ type: fc.constantFrom('roleDelete' as const, 'roleGet' as const), request: fc.record({ role: name }) }),
  fc.record({ type: fc.constant('userGrantRole' as const), request: fc.record({ user: name, role: name }) }),
  fc.record({ type: fc.constant('userRevokeRole' as const), request: fc.record({ name, role: name }) }),
  fc.record({ type: fc.constant('roleGrantPermission' as const), request: fc.record({ name, perm: fc.option(perm, { nil: null }) }) }),
  fc.record({ type: fc.constant('roleRevokePermission' as const), request: fc.record({ role: name, key: bytes, rangeEnd: bytes }) }),
) as fc.Arbitrary<ApplyOperation>;

export const applyRequest: fc.Arbitrary<ApplyRequest> = fc.record({
  header: fc.record({ id: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), username: name, authRevision: fc.nat() }),
  operation: applyOperation,
});
