import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';

/** An honest answer for an etcd RPC ward does not serve: UNIMPLEMENTED, saying which and why. */
export function unimplemented(method: string, reason?: string): GrpcStatusError {
  return new GrpcStatusError(Status.UNIMPLEMENTED, `ward: ${method} is not supported${reason === undefined ? '' : ` (${reason})`}`);
}
