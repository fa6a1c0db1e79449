import { CodedError } from '@ward/shared/errors';

/** Every code this library throws (catalogued in the README's Errors section). */
export const LINEARIZABILITY_ERROR_CODES = ['ERR_TESTING_LIN_INVALID_HISTORY', 'ERR_TESTING_LIN_PARSE'] as const;

/** Every code this library throws. */
export type LinearizabilityErrorCode = (typeof LINEARIZABILITY_ERROR_CODES)[number];

/** Base class of this library's errors. */
export class LinearizabilityError extends CodedError<LinearizabilityErrorCode> {}

/** Why a history was refused before any search. */
export type InvalidHistoryReason =
  | 'too-many-operations'
  | 'bad-time'
  | 'return-before-call'
  | 'bad-client'
  | 'bad-status';

/**
 * A recorded history is malformed (a recorder bug): a non-finite time, a return before its call,
 * more operations than allowed. `index` is the offending operation (-1 for the whole history).
 */
export class InvalidHistoryError extends LinearizabilityError {
  readonly index: number;
  readonly reason: InvalidHistoryReason;

  constructor(index: number, reason: InvalidHistoryReason, message: string) {
    super('ERR_TESTING_LIN_INVALID_HISTORY', message);
    this.index = index;
    this.reason = reason;
  }
}

/** Why a history file could not be parsed. */
export type ParseErrorReason =
  | 'too-large'
  | 'line-too-long'
  | 'syntax'
  | 'missing-field'
  | 'bad-field'
  | 'unmatched-completion'
  | 'overlapping-invocation'
  | 'mismatched-completion';

/** A history file is malformed. `line` is 1-based (0 for the whole input). */
export class HistoryParseError extends LinearizabilityError {
  readonly line: number;
  readonly reason: ParseErrorReason;

  constructor(line: number, reason: ParseErrorReason, message: string) {
    super('ERR_TESTING_LIN_PARSE', message);
    this.line = line;
    this.reason = reason;
  }
}
