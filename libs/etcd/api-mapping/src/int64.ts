// int64 / uint64 fields: decimal strings on the proto side (the workspace's loader options use
// `longs: String`), numbers (revisions, counts) or bigints (ids) on the domain side.
import { ApiMappingError } from './errors';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const DECIMAL = /^-?\d{1,20}$/;

/** What a decoder may hand over for a 64-bit field: a decimal string, a number, or a bigint. */
export type Int64Input = string | number | bigint | null | undefined;

function toBigInt(value: Int64Input, field: string): bigint {
  if (value === undefined || value === null || value === '') return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new ApiMappingError(field, `${value} is not an exact integer`);
    return BigInt(value);
  }
  if (typeof value !== 'string' || !DECIMAL.test(value)) throw new ApiMappingError(field, 'not a decimal integer');
  return BigInt(value);
}

/** An int64 as a bigint (lease and watch ids), checked to be in range. */
export function int64ToBigInt(value: Int64Input, field: string): bigint {
  const result = toBigInt(value, field);
  if (result < INT64_MIN || result > INT64_MAX) throw new ApiMappingError(field, 'outside the int64 range');
  return result;
}

/** A uint64 as a bigint (cluster and member ids, auth revision on the wire). */
export function uint64ToBigInt(value: Int64Input, field: string): bigint {
  const result = toBigInt(value, field);
  if (result < 0n || result > UINT64_MAX) throw new ApiMappingError(field, 'outside the uint64 range');
  return result;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * An int64 as a number (revisions, limits, counts). Values beyond ±(2^53 − 1) are clamped to it:
 * the domain (and the log entry codec) holds safe integers only, and no revision, version or count
 * of the store comes near 2^53, so the bound means to etcd's semantics what the value meant — a
 * future revision, no limit, a compare that cannot match, a negative revision.
 */
export function int64ToNumber(value: Int64Input, field: string): number {
  const result = int64ToBigInt(value, field);
  if (result > MAX_SAFE) return Number.MAX_SAFE_INTEGER;
  if (result < -MAX_SAFE) return -Number.MAX_SAFE_INTEGER;
  return Number(result);
}

/** A uint64 as a number, for fields known to stay below 2^53 (terms, indexes, auth revisions). */
export function uint64ToNumber(value: Int64Input, field: string): number {
  const result = uint64ToBigInt(value, field);
  if (result > BigInt(Number.MAX_SAFE_INTEGER)) throw new ApiMappingError(field, 'too large for an exact number');
  return Number(result);
}

/** A domain integer (number or bigint) as the decimal string the proto side carries. */
export function toInt64String(value: number | bigint): string {
  if (typeof value === 'number' && !Number.isInteger(value)) throw new TypeError(`toInt64String: ${value} is not an integer`);
  return typeof value === 'bigint' ? value.toString() : BigInt(value).toString();
}
