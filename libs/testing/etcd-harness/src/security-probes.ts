import type { EtcdGrpcClient, GrpcOutcome } from './grpc-client';
import { nestedTxnBytes } from './proto-bytes';

/** What a probe must get back. `detailsIncludes` is for texts that come from the gRPC library, not etcd. */
export type ProbeExpectation =
  | { readonly code: number; readonly details?: string; readonly detailsIncludes?: string }
  | { readonly ok: true }
  /** Either a success or any status other than UNKNOWN/UNAVAILABLE: the server answered and survived. */
  | { readonly answered: true };

/** One malformed or oversized request and the answer etcd gives to it. */
export interface SecurityProbe {
  readonly label: string;
  readonly send: (client: EtcdGrpcClient, rootToken: string) => Promise<GrpcOutcome<unknown>>;
  readonly expect: ProbeExpectation;
  /** Not sent to etcd 3.4.23 (it crashes or hangs on it: see the label). */
  readonly wardOnly?: boolean;
  /** A known, documented divergence: what ward answers instead of etcd's answer, and why. */
  readonly ward?: { readonly expect: ProbeExpectation; readonly because: string };
}

const MIB = 1024 * 1024;
const b = (text: string): Buffer => Buffer.from(text, 'utf8');
const INVALID_TOKEN = { code: 16, details: 'etcdserver: invalid auth token' } as const;
/**
 * Malformed and oversized input (issue: "huge keys and values, 10 MB requests, garbage tokens")
 * with etcd's answers, measured on Debian's etcd 3.4.23. JWT forgeries need a JWT-configured
 * target and live in `jwtForgeryProbes`.
 */
export const MALFORMED_INPUT_PROBES: readonly SecurityProbe[] = [
  { label: 'key of 1.4 MiB (under the request limit)', send: (c, t) => c.call('KV', 'Put', { key: Buffer.alloc(1400 * 1024, 'k'), value: b('v') }, { token: t }), expect: { ok: true } },
  { label: 'value of 1.4 MiB', send: (c, t) => c.call('KV', 'Put', { key: b('big'), value: Buffer.alloc(1400 * 1024, 'v') }, { token: t }), expect: { ok: true } },
  { label: 'value of 1.6 MiB (over 1.5 MiB)', send: (c, t) => c.call('KV', 'Put', { key: b('big'), value: Buffer.alloc(1600 * 1024, 'v') }, { token: t }), expect: { code: 3, details: 'etcdserver: request is too large' } },
  { label: 'key of 2 MiB (over the gRPC receive limit)', send: (c, t) => c.call('KV', 'Put', { key: Buffer.alloc(2 * MIB, 'k'), value: b('v') }, { token: t }), expect: { code: 8, detailsIncludes: 'larger than max' } },
  { label: 'request of 10 MB', send: (c, t) => c.call('KV', 'Put', { key: b('big'), value: Buffer.alloc(10 * MIB, 'v') }, { token: t }), expect: { code: 8, detailsIncludes: 'larger than max' } },
  { label: 'range over a 1 MiB key', send: (c, t) => c.call('KV', 'Range', { key: Buffer.alloc(MIB, 'k') }, { token: t }), expect: { ok: true } },
  { label: 'txn with 129 operations', send: (c, t) => c.call('KV', 'Txn', { success: Array.from({ length: 129 }, (_, i) => ({ request_put: { key: b(`k${i}`), value: b('v') } })) }, { token: t }), expect: { code: 3, details: 'etcdserver: too many operations in txn request' } },
  { label: 'txn putting one key twice', send: (c, t) => c.call('KV', 'Txn', { success: [{ request_put: { key: b('d'), value: b('1') } }, { request_put: { key: b('d'), value: b('2') } }] }, { token: t }), expect: { code: 3, details: 'etcdserver: duplicate key given in txn request' } },
  { label: 'txn nested 40 levels', send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(40, 'deep', 'v'), { token: t }), expect: { ok: true } },
  {
    label: 'txn nested 100 levels',
    send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(100, 'deep', 'v'), { token: t }),
    expect: { ok: true },
  },
  // The edge: etcd's per-level operation budget (--max-txn-ops 128) allows 127 nested hops, 128
  // TxnRequests in all; ward's nesting bound is the same.
  { label: 'txn nested 127 levels', send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(127, 'deep', 'v'), { token: t }), expect: { ok: true } },
  {
    label: 'txn nested 128 levels',
    send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(128, 'deep', 'v'), { token: t }),
    expect: { code: 3, details: 'etcdserver: too many operations in txn request' },
  },
  {
    label: 'txn nested 1000 levels',
    send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(1000, 'deep', 'v'), { token: t }),
    expect: { code: 3, details: 'etcdserver: too many operations in txn request' },
  },
  {
    label: 'txn nested 100000 levels',
    send: (c, t) => c.rawUnary('KV', 'Txn', nestedTxnBytes(100_000, 'deep', 'v'), { token: t }),
    expect: { code: 3, details: 'etcdserver: too many operations in txn request' },
  },
  { label: 'bytes that are not protobuf', send: (c, t) => c.rawUnary('KV', 'Put', Buffer.from([0xff, 0xff, 0xff, 0x01, 0x02]), { token: t }), expect: { code: 13 } },
  { label: 'truncated protobuf', send: (c, t) => c.rawUnary('KV', 'Put', Buffer.from([0x0a, 0x10, 0x61]), { token: t }), expect: { code: 13 } },
  { label: 'revision in the future', send: (c, t) => c.call('KV', 'Range', { key: b('a'), revision: '999999999' }, { token: t }), expect: { code: 11, details: 'etcdserver: mvcc: required revision is a future revision' } },
  { label: 'compaction in the future', send: (c, t) => c.call('KV', 'Compact', { revision: '999999999' }, { token: t }), expect: { code: 11, details: 'etcdserver: mvcc: required revision is a future revision' } },
  { label: 'password of 1 MiB', send: (c) => c.call('Auth', 'Authenticate', { name: 'root', password: 'x'.repeat(MIB) }), expect: { code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' } },
  { label: 'user name of 1 MiB', send: (c) => c.call('Auth', 'Authenticate', { name: 'x'.repeat(MIB), password: 'x' }), expect: { code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' } },
  { label: 'empty token', send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: '' }), expect: INVALID_TOKEN },
  { label: 'token a.b.c', send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: 'a.b.c' }), expect: INVALID_TOKEN },
  { label: 'token of 7000 characters', send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: 'x'.repeat(7000) }), expect: INVALID_TOKEN },
  {
    label: 'simple token with a negative index (etcd 3.4.23 waits for the client deadline)',
    send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: 'abcdefghijklmnop.-1', deadlineMs: 10_000 }),
    expect: INVALID_TOKEN,
    wardOnly: true,
  },
  { label: 'simple token with an index past uint64', send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: 'abcdefghijklmnop.99999999999999999999999' }), expect: INVALID_TOKEN },
  {
    label: 'simple token with an index far ahead (etcd waits for the client deadline; ward answers within its bound)',
    send: (c) => c.call('KV', 'Range', { key: b('a') }, { token: 'abcdefghijklmnop.999999999', deadlineMs: 10_000 }),
    expect: INVALID_TOKEN,
    wardOnly: true,
  },
  {
    label: 'user name of 1 MiB in UserAdd (kills etcd 3.4.23: bbolt "key too large" is fatal)',
    send: (c, t) => c.call('Auth', 'UserAdd', { name: 'u'.repeat(MIB), password: 'p', options: {} }, { token: t }),
    expect: { answered: true },
    wardOnly: true,
  },
  {
    label: 'role name of 1 MiB in RoleAdd (same fatal path in etcd 3.4.23)',
    send: (c, t) => c.call('Auth', 'RoleAdd', { name: 'r'.repeat(MIB) }, { token: t }),
    expect: { answered: true },
    wardOnly: true,
  },
];

/** Checks a probe's answer; returns a description of the mismatch or undefined. */
export function checkProbe(outcome: GrpcOutcome<unknown>, expectation: ProbeExpectation): string | undefined {
  if ('answered' in expectation) {
    if (!outcome.ok && (outcome.code === 2 || outcome.code === 14)) return `code ${outcome.code} ${outcome.details}: no coded answer`;
    return undefined;
  }
  if ('ok' in expectation) return outcome.ok ? undefined : `code ${outcome.code} ${outcome.details}, expected success`;
  if (outcome.ok) return `succeeded, expected code ${expectation.code}`;
  if (outcome.code !== expectation.code) return `code ${outcome.code} ${outcome.details}, expected ${expectation.code}`;
  if (expectation.details !== undefined && outcome.details !== expectation.details) return `details ${JSON.stringify(outcome.details)}, expected ${JSON.stringify(expectation.details)}`;
  if (expectation.detailsIncludes !== undefined && !outcome.details.includes(expectation.detailsIncludes)) {
    return `details ${JSON.stringify(outcome.details)} lack ${JSON.stringify(expectation.detailsIncludes)}`;
  }
  return undefined;
}
