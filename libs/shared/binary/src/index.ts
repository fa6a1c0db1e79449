export { BinaryDecodeError, type BinaryDecodeReason } from './binary-decode-error';
export { BinaryReader } from './binary-reader';
export { BinaryLimitError, BinaryWriter } from './binary-writer';
export { decodeUtf8Strict, encodeUtf8Strict, isWellFormedText } from './utf8-strict';
