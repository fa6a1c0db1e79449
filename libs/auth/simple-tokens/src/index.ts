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
export { SimpleTokenTable, type SimpleTokenOwner } from './simple-token-table';
