import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApplyResponse } from '@ward/etcd/apply';
import type { RangeResponse__Output, TxnResponse__Output } from '@ward/etcd/proto';
import {
  RESPONSE_MESSAGE_TYPES,
  applyResponseFromProto,
  applyResponseToProto,
  decodeApplyResponse,
  encodeApplyResponse,
  hasEtcdResponse,
  type RespondingOperationType,
} from './apply-response';
import type { ResponseContext } from './header';
import { applyResponse, normalize } from './test/arbitraries';
import { responseFromBytes, responseViaWire } from './test/wire';

const context: ResponseContext = { clusterId: 0xcdf818194e3a8c32n, memberId: 0x8e9e05c52164694dn, raftTerm: 7 };
const u8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** ward's own operations, answered with a wardtoken message (no etcd method). */
const SIGNING_KEY_OPERATIONS = ['signingKeyPublish', 'signingKeyRevoke', 'signingKeyList'] as const;
type EtcdOperationType = Exclude<RespondingOperationType, (typeof SIGNING_KEY_OPERATIONS)[number]>;

/** The etcd gRPC method whose response message each operation answers with. */
const METHOD: Readonly<Record<EtcdOperationType, readonly ['KV' | 'Lease' | 'Auth', string]>> = {
  range: ['KV', 'Range'],
  put: ['KV', 'Put'],
  deleteRange: ['KV', 'DeleteRange'],
  txn: ['KV', 'Txn'],
  compact: ['KV', 'Compact'],
  leaseGrant: ['Lease', 'LeaseGrant'],
  leaseRevoke: ['Lease', 'LeaseRevoke'],
  authEnable: ['Auth', 'AuthEnable'],
  authDisable: ['Auth', 'AuthDisable'],
  authStatus: ['Auth', 'AuthStatus'],
  authenticate: ['Auth', 'Authenticate'],
  userAdd: ['Auth', 'UserAdd'],
  userDelete: ['Auth', 'UserDelete'],
  userChangePassword: ['Auth', 'UserChangePassword'],
  userGrantRole: ['Auth', 'UserGrantRole'],
  userRevokeRole: ['Auth', 'UserRevokeRole'],
  userGet: ['Auth', 'UserGet'],
  userList: ['Auth', 'UserList'],
  roleAdd: ['Auth', 'RoleAdd'],
  roleDelete: ['Auth', 'RoleDelete'],
  roleGet: ['Auth', 'RoleGet'],
  roleList: ['Auth', 'RoleList'],
  roleGrantPermission: ['Auth', 'RoleGrantPermission'],
  roleRevokePermission: ['Auth', 'RoleRevokePermission'],
};

describe('ApplyResult → etcd response messages', () => {
  it('names one etcd message per responding operation, and none for simpleTokenExpire', () => {
    expect(Object.keys(RESPONSE_MESSAGE_TYPES).sort()).toEqual([...Object.keys(METHOD), ...SIGNING_KEY_OPERATIONS].sort());
    expect(hasEtcdResponse('simpleTokenExpire')).toBe(false);
    expect(() => applyResponseToProto({ type: 'simpleTokenExpire', response: {} }, 1, context)).toThrow(TypeError);
  });

  it('the signing-key directory round-trips through wardtoken.SigningKeysAnswer', () => {
    const keys = [{ keyId: 'k1', alg: 'EdDSA', publicJwk: '{"kty":"OKP"}', notBeforeSeconds: 100, retireAfterSeconds: 0 }];
    const bytes = encodeApplyResponse({ type: 'signingKeyList', response: { keys, authRevision: 9 } }, 3, context);
    const decoded = decodeApplyResponse('signingKeyList', bytes);
    expect(decoded.response).toEqual({ type: 'signingKeyList', response: { keys, authRevision: 9 } });
    expect(decoded.header.revision).toBe(3);
  });

  it('fills the header from the member context and the result revision (etcd header.fill)', () => {
    const { typeName, message } = applyResponseToProto({ type: 'authEnable', response: {} }, 42, context);
    expect(typeName).toBe('etcdserverpb.AuthEnableResponse');
    expect(message).toEqual({ header: { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '42', raft_term: '7' } });
  });

  it('leaves nested txn responses with a revision-only header, as etcd', () => {
    const response: ApplyResponse = {
      type: 'txn',
      response: {
        revision: 5,
        succeeded: true,
        responses: [
          { type: 'put', response: { revision: 5 } },
          { type: 'txn', response: { revision: 0, succeeded: false, responses: [{ type: 'range', response: { revision: 5, kvs: [], more: false, count: 0 } }] } },
        ],
      },
    };
    const bytes = encodeApplyResponse(response, 5, context);
    const decoded = responseFromBytes<TxnResponse__Output>('KV', 'Txn', bytes);
    expect(decoded.header).toEqual({ cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '5', raft_term: '7' });
    expect(decoded.responses[0]!.response_put!.header).toEqual({ cluster_id: '0', member_id: '0', revision: '5', raft_term: '0' });
    const nested = decoded.responses[1]!.response_txn!;
    expect(nested.header).toEqual({ cluster_id: '0', member_id: '0', revision: '0', raft_term: '0' });
    expect(nested.responses[0]!.response_range!.header!.revision).toBe('5');
  });

  it('encodes a Range answer that grpc-js clients decode field for field', () => {
    const bytes = encodeApplyResponse(
      {
        type: 'range',
        response: {
          revision: 9,
          kvs: [{ key: u8('a'), createRevision: 2, modRevision: 9, version: 3, value: u8('x'), lease: 7587869342117285n }],
          more: true,
          count: 4,
        },
      },
      9,
      context,
    );
    const decoded = responseFromBytes<RangeResponse__Output>('KV', 'Range', bytes);
    expect(normalize(decoded)).toEqual(
      normalize({
        header: { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '9', raft_term: '7' },
        kvs: [{ key: u8('a'), create_revision: '2', mod_revision: '9', version: '3', value: u8('x'), lease: '7587869342117285' }],
        more: true,
        count: '4',
      }),
    );
  });

  it('maps permission types to etcd3 names and keeps unknown numbers', () => {
    const { message } = applyResponseToProto(
      { type: 'roleGet', response: { perm: [{ permType: 2, key: u8('a'), rangeEnd: u8('b') }, { permType: 5, key: u8('c'), rangeEnd: new Uint8Array(0) }] } },
      3,
      context,
    );
    const decoded = responseViaWire<{ perm: { permType: unknown }[] }>('Auth', 'RoleGet', message);
    expect(decoded.perm.map((p) => p.permType)).toEqual(['Readwrite', 5]);
  });

  it('domain → proto → bytes (real grpc-js serializer) → proto → domain is identity for every operation', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (revision, raftTerm) =>
        fc.assert(
          fc.property(applyResponse(revision), (response) => {
            const ctx = { ...context, raftTerm };
            const { message } = applyResponseToProto(response, revision, ctx);
            const [service, method] = METHOD[response.type as EtcdOperationType];
            const back = applyResponseFromProto(response.type, responseViaWire(service, method, message));
            expect(normalize(back.response)).toEqual(normalize(response));
            expect(back.header).toEqual({ ...ctx, revision });
          }),
          { numRuns: 20 },
        ),
      ),
      { numRuns: 20 },
    );
  });

  it('decodeApplyResponse reads what encodeApplyResponse wrote', () => {
    fc.assert(
      fc.property(applyResponse(11), (response) => {
        const back = decodeApplyResponse(response.type, encodeApplyResponse(response, 11, context));
        expect(normalize(back.response)).toEqual(normalize(response));
      }),
    );
  });
});
