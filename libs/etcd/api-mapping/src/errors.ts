import { CodedError } from '@ward/shared/errors';

/** Codes of the mapping layer's own errors (etcd's validation errors are `EtcdWireError`s). */
export type ApiMappingErrorCode = 'ERR_API_MAPPING_INVALID_FIELD';

export const API_MAPPING_ERROR_CODES: readonly ApiMappingErrorCode[] = Object.freeze(['ERR_API_MAPPING_INVALID_FIELD']);

/** gRPC INVALID_ARGUMENT. */
const INVALID_ARGUMENT = 3;

/**
 * A request field etcd's decoder would have refused or that has no etcd meaning (an int64 that is
 * not an integer, an enum number outside the proto enum where etcd gives it no meaning). Carries
 * `grpcCode` INVALID_ARGUMENT so the gRPC edge answers it as such; `field` names the proto path.
 *
 * @example
 * ```ts
 * try { rangeRequestFromProto(request) } catch (error) {
 *   if (error instanceof ApiMappingError) log.warn({ field: error.field }, 'bad request');
 * }
 * ```
 */
export class ApiMappingError extends CodedError<ApiMappingErrorCode> {
  readonly field: string;
  readonly grpcCode = INVALID_ARGUMENT;

  constructor(field: string, reason: string) {
    super('ERR_API_MAPPING_INVALID_FIELD', `invalid ${field}: ${reason}`);
    this.field = field;
  }
}
