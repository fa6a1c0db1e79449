// Bytes fields: grpc-js hands over Buffers (a Uint8Array subclass); JSON-derived objects may carry
// base64 strings. The domain wants Uint8Array; the proto side gets Buffers viewing the same memory.
import { ApiMappingError } from './errors';

const EMPTY = new Uint8Array(0);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A decoded bytes field as a Uint8Array (absent: empty). Strings are read as base64, as protobufjs does. */
export function bytesFromProto(value: unknown, field: string): Uint8Array {
  if (value === undefined || value === null) return EMPTY;
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') {
    if (value.length % 4 !== 0 || !BASE64.test(value)) throw new ApiMappingError(field, 'not base64');
    return new Uint8Array(Buffer.from(value, 'base64'));
  }
  throw new ApiMappingError(field, 'not bytes');
}

/** A domain byte string as the Buffer grpc-js and the generated types expect (no copy). */
export function bytesToProto(value: Uint8Array | undefined): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/** A decoded string field (absent: empty). */
export function stringFromProto(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ApiMappingError(field, 'not a string');
  return value;
}

/** A decoded bool field (absent: false). */
export function boolFromProto(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new ApiMappingError(field, 'not a boolean');
  return value;
}
