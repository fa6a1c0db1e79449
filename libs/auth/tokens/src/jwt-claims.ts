import { assert } from '@ward/shared/errors';
import { invalidToken } from './errors';

/** Who a verified token speaks for (etcd's AuthInfo) and what bounds it. */
export interface JwtIdentity {
  readonly username: string;
  /** The auth revision the token was minted at. */
  readonly revision: number;
  /** `exp` in seconds since the epoch, when present. */
  readonly expiresAtSeconds: number | undefined;
  /** `kid` of the key that verified it, when known. */
  readonly keyId: string | undefined;
}

/**
 * etcd's claim rules (server/auth/jwt.go `info`): `username` must be a string (empty allowed: the
 * request then fails later with `user name is empty`, as in etcd) and `revision` a number. ward
 * also requires revision to be a non-negative safe integer (etcd converts any float to uint64).
 */
export function readEtcdClaims(payload: Record<string, unknown>): { username: string; revision: number } {
  if (!('username' in payload)) throw invalidToken('claim-missing', { claim: 'username' });
  if (!('revision' in payload)) throw invalidToken('claim-missing', { claim: 'revision' });
  const { username, revision } = payload;
  if (typeof username !== 'string') throw invalidToken('claim-invalid', { claim: 'username' });
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) {
    throw invalidToken('claim-invalid', { claim: 'revision' });
  }
  return { username, revision };
}

/** The claims etcd issues, in the order Go's json.Marshal writes a map (sorted keys). */
export function etcdClaims(username: string, revision: number, expiresAtSeconds: number): Record<string, unknown> {
  assert(Number.isSafeInteger(revision) && revision >= 0, 'revision is a non-negative safe integer');
  assert(Number.isSafeInteger(expiresAtSeconds) && expiresAtSeconds > 0, 'exp is a positive integer');
  return { exp: expiresAtSeconds, revision, username };
}
