import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';

/** An honest answer for an etcd RPC ward does not serve: UNIMPLEMENTED, naming it (a stable text). */
export function unimplemented(method: string): GrpcStatusError {
  return new GrpcStatusError(Status.UNIMPLEMENTED, `ward: ${method} is not supported`);
}
