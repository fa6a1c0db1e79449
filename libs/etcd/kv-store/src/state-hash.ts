import type { BinarySink } from '@ward/shared/binary';

/** CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) lookup table. */
const CRC32C_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * A 64-bit digest of a byte stream from two independent standard 32-bit checksums: CRC-32C (as
 * etcd's HashKV uses) and FNV-1a. Deterministic on every platform (32-bit integer arithmetic).
 * Not cryptographic: it detects replica divergence and corruption, not tampering.
 */
export class StateHasher implements BinarySink {
  private crc = 0xffffffff;
  private fnv = FNV_OFFSET_BASIS;

  write(chunk: Uint8Array): void {
    let crc = this.crc;
    let fnv = this.fnv;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
      fnv = Math.imul(fnv ^ byte, FNV_PRIME);
    }
    this.crc = crc;
    this.fnv = fnv;
  }

  /** CRC-32C of the bytes so far. */
  get crc32c(): number {
    return (this.crc ^ 0xffffffff) >>> 0;
  }

  /** FNV-1a (32-bit) of the bytes so far. */
  get fnv1a(): number {
    return this.fnv >>> 0;
  }

  /** Both checksums as 16 lower-case hex digits: CRC-32C then FNV-1a. */
  digestHex(): string {
    return this.crc32c.toString(16).padStart(8, '0') + this.fnv1a.toString(16).padStart(8, '0');
  }
}
