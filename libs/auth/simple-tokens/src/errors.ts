import { CodedError } from '@ward/shared/errors';

/** Every operating failure of the simple-token table. */
export const SIMPLE_TOKEN_ERROR_CODES = [
  // The table holds its configured maximum of tokens; Authenticate must fail (deterministically).
  'ERR_AUTH_SIMPLE_TOKEN_TABLE_FULL',
  // An assignment names a token that is already assigned (etcd panics here; a replica must not).
  'ERR_AUTH_SIMPLE_TOKEN_DUPLICATE',
  // An assignment carries a prefix or index that is not in etcd's simple-token format.
  'ERR_AUTH_SIMPLE_TOKEN_MALFORMED',
] as const;

export type SimpleTokenErrorCode = (typeof SIMPLE_TOKEN_ERROR_CODES)[number];

const MESSAGES: Readonly<Record<SimpleTokenErrorCode, string>> = {
  ERR_AUTH_SIMPLE_TOKEN_TABLE_FULL: 'simple token table is full',
  ERR_AUTH_SIMPLE_TOKEN_DUPLICATE: 'simple token is already assigned',
  ERR_AUTH_SIMPLE_TOKEN_MALFORMED: 'simple token assignment is malformed',
};

/**
 * An expected failure of a simple-token table operation. Context is in fields; the token itself
 * is never carried (it is a bearer secret).
 *
 * @example
 * ```ts
 * try { table.assign({ prefix, index, username, nowMs }) } catch (error) {
 *   if (error instanceof SimpleTokenError && error.code === 'ERR_AUTH_SIMPLE_TOKEN_TABLE_FULL') { ... }
 * }
 * ```
 */
export class SimpleTokenError extends CodedError<SimpleTokenErrorCode> {
  /** The assignment's log index, when the failure concerns one. */
  readonly index: number | undefined;

  constructor(code: SimpleTokenErrorCode, context: { index?: number } = {}) {
    super(code, `auth: ${MESSAGES[code]}`);
    this.index = context.index;
  }
}
