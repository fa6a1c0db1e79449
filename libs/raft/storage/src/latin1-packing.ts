import { PACK_RUN_MAX_BYTES, type BytesAsText } from '@ward/raft/core';

/**
 * The MemoryStorage's packer on Node.js: bytes as latin1 (one character per byte, every byte value
 * kept). Runs up to PACK_RUN_MAX_BYTES are gathered in one buffer kept for the purpose, so packing
 * allocates nothing outside the heap; a longer single entry is copied out once to be decoded.
 */
export function latin1Packing(): BytesAsText {
  const scratch = Buffer.allocUnsafeSlow(PACK_RUN_MAX_BYTES);
  return {
    pack(parts, totalBytes) {
      if (totalBytes > scratch.length) return Buffer.concat(parts, totalBytes).toString('latin1');
      let at = 0;
      for (const part of parts) {
        scratch.set(part, at);
        at += part.length;
      }
      return scratch.toString('latin1', 0, at);
    },
    unpack(text, start, end) {
      return Buffer.from(text.substring(start, end), 'latin1');
    },
  };
}
