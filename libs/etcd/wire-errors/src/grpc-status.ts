/** gRPC status codes (the numbers are the protocol; grpc-js calls the enum `Status`). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/**
 * The names Go's grpc `codes.Code.String()` prints. etcd puts them into user-visible text, for
 * example a refused watch's cancel_reason `rpc error: code = PermissionDenied desc = ...`.
 */
const GO_CODE_NAMES: Readonly<Record<GrpcStatusCode, string>> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

export function goCodeName(code: GrpcStatusCode): string {
  return GO_CODE_NAMES[code];
}

/**
 * HTTP status for a gRPC code, as etcd's JSON gateway (grpc-gateway's HTTPStatusFromCode) answers.
 */
const HTTP_STATUS: Readonly<Record<GrpcStatusCode, number>> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

export function httpStatusOf(code: GrpcStatusCode): number {
  return HTTP_STATUS[code];
}

export function isGrpcStatusCode(value: unknown): value is GrpcStatusCode {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 16;
}
