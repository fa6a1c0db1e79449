// fast-check arbitraries of domain requests and responses in their canonical form (every field
// present), so that domain → proto → bytes → proto → domain must give back the same value.
import fc from 'fast-check';
import type { Permission } from '@ward/auth/permissions';
import type { ApplyResponse } from '@ward/etcd/apply';
import type {
  Compare,
  DeleteRangeRequest,
  KeyValue,
  PutRequest,
  RangeRequest,
  RangeResponse,
  RequestOp,
  ResponseOp,
  TxnRequest,
  TxnResponse,
} from '@ward/etcd/kv-store';
import type { WatchCommand, WatchEventFields, WatchResponse } from '../watch';

export const bytes = (min = 0, max = 8): fc.Arbitrary<Uint8Array> => fc.uint8Array({ minLength: min, maxLength: max });
export const key = bytes(1, 8);
export const revision = fc.maxSafeInteger();
export const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
export const safeInt = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

export const keyValue: fc.Arbitrary<KeyValue> = fc.record({
  key,
  createRevision: fc.nat(),
  modRevision: fc.nat(),
  version: fc.nat(),
  value: bytes(0, 16),
  lease: int64,
});

export const rangeRequest: fc.Arbitrary<RangeRequest> = fc.record({
  key,
  rangeEnd: bytes(0, 4),
  limit: safeInt,
  revision: safeInt,
  sortOrder: fc.constantFrom('NONE', 'ASCEND', 'DESCEND'),
  sortTarget: fc.constantFrom('KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'),
  serializable: fc.boolean(),
  keysOnly: fc.boolean(),
  countOnly: fc.boolean(),
  minModRevision: safeInt,
  maxModRevision: safeInt,
  minCreateRevision: safeInt,
  maxCreateRevision: safeInt,
});

export const putRequest: fc.Arbitrary<PutRequest> = fc
  .record({ key, value: bytes(0, 16), lease: int64, prevKv: fc.boolean(), ignoreValue: fc.boolean(), ignoreLease: fc.boolean() })
  .map((p) => ({ ...p, value: p.ignoreValue ? new Uint8Array(0) : p.value, lease: p.ignoreLease ? 0n : p.lease }));

export const deleteRangeRequest: fc.Arbitrary<DeleteRangeRequest> = fc.record({ key, rangeEnd: bytes(0, 4), prevKv: fc.boolean() });

const compareBase = { result: fc.constantFrom('EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'), key, rangeEnd: bytes(0, 4) } as const;
export const compare: fc.Arbitrary<Compare> = fc.oneof(
  fc.record({ ...compareBase, target: fc.constant('VERSION' as const), version: safeInt }),
  fc.record({ ...compareBase, target: fc.constant('CREATE' as const), createRevision: safeInt }),
  fc.record({ ...compareBase, target: fc.constant('MOD' as const), modRevision: safeInt }),
  fc.record({ ...compareBase, target: fc.constant('VALUE' as const), value: bytes(0, 8) }),
  fc.record({ ...compareBase, target: fc.constant('LEASE' as const), lease: int64 }),
);

/** Txns whose branches never touch one key twice (each op gets its own key prefix), so they validate. */
export const txnRequest: fc.Arbitrary<TxnRequest> = fc.letrec<{ txn: TxnRequest; op: RequestOp }>((tie) => ({
  op: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    rangeRequest.map((request): RequestOp => ({ type: 'range', request })),
    putRequest.map((request): RequestOp => ({ type: 'put', request })),
    deleteRangeRequest.map((request): RequestOp => ({ type: 'deleteRange', request: { ...request, rangeEnd: new Uint8Array(0) } })),
    tie('txn').map((request): RequestOp => ({ type: 'txn', request: request as TxnRequest })),
  ),
  txn: fc.record({
    compare: fc.array(compare, { maxLength: 3 }),
    success: fc.array(tie('op') as fc.Arbitrary<RequestOp>, { maxLength: 3 }),
    failure: fc.array(tie('op') as fc.Arbitrary<RequestOp>, { maxLength: 3 }),
  }),
})).txn.map(uniqueWriteKeys);

/** Gives every write of the txn tree a distinct key, so that etcd's duplicate-key check passes. */
function uniqueWriteKeys(txn: TxnRequest): TxnRequest {
  let counter = 0;
  const fresh = (): Uint8Array => new Uint8Array([0xf0, (counter >> 8) & 0xff, counter++ & 0xff]);
  const walk = (t: TxnRequest): TxnRequest => ({
    compare: t.compare,
    success: t.success.map(op),
    failure: t.failure.map(op),
  });
  const op = (o: RequestOp): RequestOp => {
    switch (o.type) {
      case 'put':
        return { type: 'put', request: { ...o.request, key: fresh() } };
      case 'deleteRange':
        return { type: 'deleteRange', request: { ...o.request, key: fresh(), rangeEnd: new Uint8Array(0) } };
      case 'txn':
        return { type: 'txn', request: walk(o.request) };
      default:
        return o;
    }
  };
  return walk(txn);
}

export const rangeResponse: fc.Arbitrary<RangeResponse> = fc.record({
  revision: fc.nat(),
  kvs: fc.array(keyValue, { maxLength: 4 }),
  more: fc.boolean(),
  count: fc.nat(),
});

export const txnResponse: fc.Arbitrary<TxnResponse> = fc.letrec<{ txn: TxnResponse; op: ResponseOp }>((tie) => ({
  op: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    rangeResponse.map((response): ResponseOp => ({ type: 'range', response })),
    fc.record({ revision: fc.nat(), prevKv: fc.option(keyValue, { nil: undefined }) }).map(
      (r): ResponseOp => ({ type: 'put', response: r.prevKv === undefined ? { revision: r.revision } : r }),
    ),
    fc.record({ revision: fc.nat(), deleted: fc.nat(), prevKvs: fc.array(keyValue, { maxLength: 3 }) }).map(
      (response): ResponseOp => ({ type: 'deleteRange', response }),
    ),
    tie('txn').map((response): ResponseOp => ({ type: 'txn', response: response as TxnResponse })),
  ),
  txn: fc.record({ revision: fc.nat(), succeeded: fc.boolean(), responses: fc.array(tie('op') as fc.Arbitrary<ResponseOp>, { maxLength: 3 }) }),
})).txn;

export const permission: fc.Arbitrary<Permission> = fc.record({
  permType: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  key: bytes(0, 6),
  rangeEnd: bytes(0, 6),
});

const names = fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 });

/** Every ApplyResponse kind with an etcd message; top-level KV responses carry `revision` = header. */
export const applyResponse = (headerRevision: number): fc.Arbitrary<ApplyResponse> =>
  fc.oneof(
    rangeResponse.map((r): ApplyResponse => ({ type: 'range', response: { ...r, revision: headerRevision } })),
    fc.option(keyValue, { nil: undefined }).map(
      (prevKv): ApplyResponse => ({ type: 'put', response: prevKv === undefined ? { revision: headerRevision } : { revision: headerRevision, prevKv } }),
    ),
    fc.record({ deleted: fc.nat(), prevKvs: fc.array(keyValue, { maxLength: 3 }) }).map(
      (r): ApplyResponse => ({ type: 'deleteRange', response: { ...r, revision: headerRevision } }),
    ),
    txnResponse.map((r): ApplyResponse => ({ type: 'txn', response: { ...r, revision: headerRevision } })),
    fc.constant<ApplyResponse>({ type: 'compact', response: { revision: headerRevision } }),
    fc.record({ id: int64, ttlSeconds: safeInt }).map((response): ApplyResponse => ({ type: 'leaseGrant', response })),
    fc.record({ enabled: fc.boolean(), authRevision: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }) }).map((response): ApplyResponse => ({ type: 'authStatus', response })),
    fc.string().map((token): ApplyResponse => ({ type: 'authenticate', response: { token } })),
    names.map((roles): ApplyResponse => ({ type: 'userGet', response: { roles } })),
    names.map((users): ApplyResponse => ({ type: 'userList', response: { users } })),
    names.map((roles): ApplyResponse => ({ type: 'roleList', response: { roles } })),
    fc.array(permission, { maxLength: 3 }).map((perm): ApplyResponse => ({ type: 'roleGet', response: { perm } })),
    fc
      .constantFrom(
        'leaseRevoke',
        'authEnable',
        'authDisable',
        'userAdd',
        'userDelete',
        'userChangePassword',
        'userGrantRole',
        'userRevokeRole',
        'roleAdd',
        'roleDelete',
        'roleGrantPermission',
        'roleRevokePermission',
      )
      .map((type) => ({ type, response: {} }) as ApplyResponse),
  );

const watchEvent: fc.Arbitrary<WatchEventFields> = fc
  .record({ type: fc.constantFrom('PUT', 'DELETE'), kv: keyValue, prevKv: fc.option(keyValue, { nil: undefined }) })
  .map((e) => (e.prevKv === undefined ? { type: e.type, kv: e.kv } : e));

export const watchResponse: fc.Arbitrary<WatchResponse> = fc.record({
  revision: fc.nat(),
  watchId: int64,
  created: fc.boolean(),
  canceled: fc.boolean(),
  compactRevision: fc.nat(),
  cancelReason: fc.string(),
  fragment: fc.boolean(),
  events: fc.array(watchEvent, { maxLength: 4 }),
});

export const watchCommand: fc.Arbitrary<WatchCommand> = fc.oneof(
  fc
    .record({
      key,
      rangeEnd: bytes(0, 4),
      startRevision: safeInt,
      progressNotify: fc.boolean(),
      filters: fc.subarray(['NOPUT', 'NODELETE'] as const),
      prevKv: fc.boolean(),
      watchId: int64,
      fragment: fc.boolean(),
    })
    .map((request): WatchCommand => ({ type: 'create', request })),
  int64.map((watchId): WatchCommand => ({ type: 'cancel', watchId })),
  fc.constant<WatchCommand>({ type: 'progress' }),
);

/** Uint8Arrays (and Buffers) become hex strings, so values compare by content, not by class. */
export function normalize(value: unknown): unknown {
  if (value instanceof Uint8Array) return `hex:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = normalize(v);
    return out;
  }
  return value;
}
