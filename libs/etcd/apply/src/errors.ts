import { CodedError } from '@ward/shared/errors';
import type { LeaseId } from '@ward/etcd/kv-store';

/** Every code the apply layer raises itself (the auth store and key space have their own). */
export const APPLY_ERROR_CODES = [
  'ERR_APPLY_LEASE_EXIST', // etcd lease.ErrLeaseExists
  'ERR_APPLY_LEASE_NOT_FOUND', // etcd lease.ErrLeaseNotFound
  'ERR_APPLY_LEASE_TTL_TOO_LARGE', // etcd lease.ErrLeaseTTLTooLarge
  'ERR_APPLY_LEASE_LIMIT', // ward: the lease table is full
  'ERR_APPLY_ENTRY_INVALID', // ward: log entry bytes that are not a valid request
  'ERR_APPLY_ENTRY_TOO_LARGE', // ward: a request above the entry size limit
  'ERR_APPLY_SNAPSHOT_INVALID', // ward: snapshot bytes that do not decode
  'ERR_APPLY_SIGNING_KEY_INVALID', // ward: a malformed token signing key record
  'ERR_APPLY_SIGNING_KEY_CONFLICT', // ward: a key id published with another key
  'ERR_APPLY_SIGNING_KEY_REVOKED', // ward: publishing a revoked key id
  'ERR_APPLY_SIGNING_KEY_NOT_FOUND', // ward: revoking an unknown key id
  'ERR_APPLY_SIGNING_KEY_LIMIT', // ward: the key directory is full
] as const;

export type ApplyErrorCode = (typeof APPLY_ERROR_CODES)[number];

/** An expected failure of the apply layer: a lease rule, or bytes that are not a valid entry. */
export class ApplyError extends CodedError<ApplyErrorCode> {
  /** The lease concerned, for the lease codes. */
  readonly lease: LeaseId | undefined;
  /** Where decoding stopped, for the entry and snapshot codes. */
  readonly offset: number | undefined;

  constructor(code: ApplyErrorCode, message: string, context: { lease?: LeaseId; offset?: number; cause?: unknown } = {}) {
    super(code, message, context.cause === undefined ? undefined : { cause: context.cause });
    this.lease = context.lease;
    this.offset = context.offset;
  }
}
