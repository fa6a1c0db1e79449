export {
  EMPTY_BYTES,
  compareBytes,
  concatBytes,
  equalBytes,
  fromHex,
  fromUtf8,
  prefixRangeEnd,
  splitBytes,
  toHex,
  utf8,
} from './bytes';
