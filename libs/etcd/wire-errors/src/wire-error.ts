import { CodedError } from '@ward/shared/errors';
import { WIRE_ERRORS, WIRE_ERROR_NAMES, type WireErrorName } from './catalogue';
import { goCodeName, type GrpcStatusCode } from './grpc-status';

/**
 * An etcd server error on its way to a client: the catalogue entry's gRPC code and exact text.
 * `code` is `ERR_ETCD_WIRE` for every instance; `wireName` says which error it is.
 *
 * @example
 * ```ts
 * throw wireError('PermissionDenied');
 * // at the gRPC edge: { code: error.grpcCode, details: error.message }
 * ```
 */
export class EtcdWireError extends CodedError<'ERR_ETCD_WIRE'> {
  readonly wireName: WireErrorName;
  readonly grpcCode: GrpcStatusCode;

  constructor(wireName: WireErrorName, options?: { cause?: unknown }) {
    const spec = WIRE_ERRORS[wireName];
    if (spec === undefined) throw new TypeError(`EtcdWireError: unknown wire error ${String(wireName)}`);
    super('ERR_ETCD_WIRE', spec.message, options);
    this.wireName = wireName;
    this.grpcCode = spec.code;
  }
}

export function wireError(name: WireErrorName, options?: { cause?: unknown }): EtcdWireError {
  return new EtcdWireError(name, options);
}

export function isWireError(value: unknown, name?: WireErrorName): value is EtcdWireError {
  return value instanceof EtcdWireError && (name === undefined || value.wireName === name);
}

const BY_MESSAGE: ReadonlyMap<string, WireErrorName> = new Map(
  WIRE_ERROR_NAMES.map((name) => [WIRE_ERRORS[name].message, name] as const),
);

/** The catalogue entry with this exact text (what etcd clients do with a status message). */
export function wireErrorNameByMessage(message: string): WireErrorName | undefined {
  return BY_MESSAGE.get(message);
}

/**
 * The text Go's `status.Error(...).Error()` gives: etcd puts it into a refused watch's
 * cancel_reason, e.g. `rpc error: code = PermissionDenied desc = etcdserver: permission denied`.
 */
export function goStatusString(name: WireErrorName): string {
  const spec = WIRE_ERRORS[name];
  return `rpc error: code = ${goCodeName(spec.code)} desc = ${spec.message}`;
}
