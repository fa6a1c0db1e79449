import { status as Status } from '@grpc/grpc-js';
import { CodedError } from '@ward/shared/errors';

/** What the client receives: a gRPC status code and its details text. */
export interface GrpcStatusLike {
  readonly code: Status;
  readonly details: string;
}

/** Thrown by handlers for a specific status (for errors not in a domain catalogue). */
export class GrpcStatusError extends CodedError<'ERR_GRPC_STATUS'> {
  readonly grpcCode: Status;

  constructor(grpcCode: Status, details: string, options?: { cause?: unknown }) {
    super('ERR_GRPC_STATUS', details, options);
    this.grpcCode = grpcCode;
  }
}

/** The text a client sees for anything the server did not mean to send. */
export const INTERNAL_ERROR_DETAILS = 'internal error';

function carriesStatus(error: unknown): error is { grpcCode: number; message: string } {
  if (typeof error !== 'object' || error === null) return false;
  const { grpcCode, message } = error as { grpcCode?: unknown; message?: unknown };
  return typeof grpcCode === 'number' && Number.isInteger(grpcCode) && grpcCode > 0 && grpcCode <= 16 && typeof message === 'string';
}

export type ErrorMapper = (error: unknown) => GrpcStatusLike | undefined;

/**
 * The one place an error becomes a gRPC status. Errors that carry a status on purpose (a
 * `grpcCode` and a `message`, as GrpcStatusError and etcd's wire errors do) pass through; the
 * app's mapper gets the rest; anything left becomes INTERNAL with a fixed text, so no internals
 * (paths, stack, driver messages) ever reach a client, and `unmapped` is true so the caller logs it.
 */
export function toGrpcStatus(error: unknown, mapError?: ErrorMapper): GrpcStatusLike & { unmapped: boolean } {
  if (carriesStatus(error)) return { code: error.grpcCode as Status, details: error.message, unmapped: false };
  const mapped = mapError?.(error);
  if (mapped) return { ...mapped, unmapped: false };
  return { code: Status.INTERNAL, details: INTERNAL_ERROR_DETAILS, unmapped: true };
}
