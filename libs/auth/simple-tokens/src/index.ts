export { SIMPLE_TOKEN_ERROR_CODES, SimpleTokenError, type SimpleTokenErrorCode } from './errors';
export {
  DEFAULT_SIMPLE_TOKEN_TABLE_OPTIONS,
  DEFAULT_SIMPLE_TOKEN_TTL_SECONDS,
  MAX_SIMPLE_TOKEN_TTL_MS,
  resolveSimpleTokenTableOptions,
  simpleTokenRefreshIntervalMs,
  type SimpleTokenTableOptions,
} from './limits';
export {
  SIMPLE_TOKEN_ALPHABET,
  SIMPLE_TOKEN_MAX_LENGTH_CHARS,
  SIMPLE_TOKEN_PREFIX_LENGTH_CHARS,
  formatSimpleToken,
  generateSimpleTokenPrefix,
  isSimpleTokenPrefix,
  parseSimpleToken,
  sealSimpleToken,
  sealSimpleTokenPrefix,
  type SimpleTokenParts,
} from './simple-token-format';
export { SimpleTokenKeeper } from './simple-token-keeper';
export {
  SimpleTokenTable,
  type SimpleTokenAssigned,
  type SimpleTokenAssignment,
  type SimpleTokenRecord,
} from './simple-token-table';
export { TokenActivity } from './token-activity';
