import { CodedError } from '@ward/shared/errors';

/** Why a byte string could not be decoded (a small closed vocabulary, as jose's claim reasons). */
export type BinaryDecodeReason =
  | 'truncated'
  | 'varint-too-long'
  | 'varint-not-canonical'
  | 'out-of-range'
  | 'invalid-utf8'
  | 'too-large'
  | 'trailing-bytes'
  | 'invalid-value';

/**
 * Untrusted bytes that do not follow the format. Carries the byte offset where decoding stopped and
 * a reason; never the bytes themselves (they may hold secrets such as password hashes).
 */
export class BinaryDecodeError extends CodedError<'ERR_BINARY_DECODE'> {
  readonly offset: number;
  readonly reason: BinaryDecodeReason;
  /** What was wrong, in words (formats that wrap this error in their own repeat it). */
  readonly detail: string;

  constructor(reason: BinaryDecodeReason, offset: number, detail: string) {
    super('ERR_BINARY_DECODE', `cannot decode at byte ${offset}: ${reason} (${detail})`);
    this.offset = offset;
    this.reason = reason;
    this.detail = detail;
  }
}
