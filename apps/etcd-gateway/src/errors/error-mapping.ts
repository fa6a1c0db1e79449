// The gateway's one translation of its own failures into etcd wire errors, handed to
// @ward/platform/grpc-server (which passes errors that already carry a status — etcd wire
// errors, api-mapping's InvalidArgument — straight through). The JSON gateway uses the same.
import type { status as Status } from '@grpc/grpc-js';
import { passwordErrorWireName } from '@ward/etcd/authenticate';
import { TokenError } from '@ward/auth/tokens';
import { toGrpcStatus, type GrpcStatusLike } from '@ward/platform/grpc-server';
import { WIRE_ERRORS, type WireErrorName } from '@ward/etcd/wire-errors';

function wire(name: WireErrorName): GrpcStatusLike {
  const spec = WIRE_ERRORS[name];
  return { code: spec.code as Status, details: spec.message };
}

/** Maps the gateway's coded errors to etcd's; undefined for anything it does not know. */
export function mapGatewayError(error: unknown): GrpcStatusLike | undefined {
  const password = passwordErrorWireName(error);
  if (password !== undefined) return wire(password);
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
