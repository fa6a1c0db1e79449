// The gateway's one translation of its own failures into etcd wire errors, handed to
// @ward/platform/grpc-server (which passes errors that already carry a status — etcd wire
// errors, api-mapping's InvalidArgument — straight through). The JSON gateway uses the same.
import type { status as Status } from '@grpc/grpc-js';
import { PasswordError } from '@ward/auth/password-jobs';
import { TokenError } from '@ward/auth/tokens';
import { toGrpcStatus, type GrpcStatusLike } from '@ward/platform/grpc-server';
import { WIRE_ERRORS, type WireErrorName } from '@ward/etcd/wire-errors';

const PASSWORD_ERRORS: Readonly<Record<PasswordError['code'], WireErrorName>> = {
  // etcd ≥ 3.5: the bcrypt error is unmapped and reaches the client as Unknown with its text.
  ERR_AUTH_PASSWORD_TOO_LONG: 'PasswordTooLong',
  // Only reachable when hashing; verification of a malformed stored hash is `authentication failed`.
  ERR_AUTH_PASSWORD_HASH_MALFORMED: 'AuthFailed',
  ERR_AUTH_PASSWORD_TIER_BUSY: 'TooManyRequests',
  ERR_AUTH_PASSWORD_TIER_TIMEOUT: 'Timeout',
  ERR_AUTH_PASSWORD_TIER_FAILED: 'Unhealthy',
  ERR_AUTH_PASSWORD_TIER_CLOSED: 'Stopped',
};

function wire(name: WireErrorName): GrpcStatusLike {
  const spec = WIRE_ERRORS[name];
  return { code: spec.code as Status, details: spec.message };
}

/** Maps the gateway's coded errors to etcd's; undefined for anything it does not know. */
export function mapGatewayError(error: unknown): GrpcStatusLike | undefined {
  if (error instanceof PasswordError) return wire(PASSWORD_ERRORS[error.code]);
  if (error instanceof TokenError) {
    if (error.code === 'ERR_AUTH_TOKEN_INVALID') return wire('InvalidAuthToken');
    if (error.code === 'ERR_AUTH_TOKEN_VERIFY_ONLY') return wire('VerifyOnly');
  }
  return undefined;
}

/** The status a client receives for `error` (unmapped: INTERNAL with a fixed text). */
export function statusOf(error: unknown): GrpcStatusLike & { unmapped: boolean } {
  return toGrpcStatus(error, mapGatewayError);
}
