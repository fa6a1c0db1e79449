export { BinaryDecodeError, type BinaryDecodeReason } from './binary-decode-error';
export { BinaryReader } from './binary-reader';
export { BinaryLimitError, BinaryWriter, ChunkSink, CollectingSink, TeeSink, chunksByteLength, joinChunks, putUvarint, uvarintBytes, type BinarySink, type BinaryWriterOptions } from './binary-writer';
export { latin1FromBytes, latin1IntoBytes } from './latin1';
export { setUint32le, setUint64le } from './little-endian';
export { spliceRuns, type Placed } from './placed';
export { decodeUtf8Strict, encodeUtf8Strict, isWellFormedText } from './utf8-strict';
