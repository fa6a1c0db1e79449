// SHA-256 (FIPS 180-4) in plain TypeScript, for code that cannot reach Node's crypto (deterministic
// domain libraries hash their state to compare replicas). Incremental: feed any number of chunks.

const ROUND_CONSTANTS = Uint32Array.of(
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
);

const INITIAL_STATE = Uint32Array.of(
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
);

const BLOCK_BYTES = 64;

/** An incremental SHA-256 computation: `update` any number of times, then `digest` once. */
export class Sha256 {
  private readonly state = INITIAL_STATE.slice();
  private readonly block = new Uint8Array(BLOCK_BYTES);
  private readonly schedule = new Uint32Array(64);
  private blockFillBytes = 0;
  private totalBytes = 0;
  private finished = false;

  update(data: Uint8Array): this {
    if (this.finished) throw new TypeError('Sha256: update after digest');
    let offset = 0;
    this.totalBytes += data.length;
    if (this.blockFillBytes > 0) {
      const take = Math.min(BLOCK_BYTES - this.blockFillBytes, data.length);
      this.block.set(data.subarray(0, take), this.blockFillBytes);
      this.blockFillBytes += take;
      offset = take;
      if (this.blockFillBytes < BLOCK_BYTES) return this;
      this.compress(this.block, 0);
      this.blockFillBytes = 0;
    }
    for (; offset + BLOCK_BYTES <= data.length; offset += BLOCK_BYTES) this.compress(data, offset);
    this.block.set(data.subarray(offset), 0);
    this.blockFillBytes = data.length - offset;
    return this;
  }

  /** The 32-byte digest; the instance cannot be updated afterwards. */
  digest(): Uint8Array {
    if (this.finished) throw new TypeError('Sha256: digest called twice');
    this.finished = true;
    const bitLength = this.totalBytes * 8;
    this.block[this.blockFillBytes++] = 0x80;
    if (this.blockFillBytes > BLOCK_BYTES - 8) {
      this.block.fill(0, this.blockFillBytes);
      this.compress(this.block, 0);
      this.blockFillBytes = 0;
    }
    this.block.fill(0, this.blockFillBytes);
    const high = Math.floor(bitLength / 0x1_0000_0000);
    const view = new DataView(this.block.buffer, this.block.byteOffset, BLOCK_BYTES);
    view.setUint32(56, high >>> 0);
    view.setUint32(60, bitLength >>> 0);
    this.compress(this.block, 0);
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    for (let i = 0; i < 8; i++) outView.setUint32(i * 4, this.state[i]!);
    return out;
  }

  private compress(data: Uint8Array, offset: number): void {
    const w = this.schedule;
    for (let i = 0; i < 16; i++) {
      const at = offset + i * 4;
      w[i] = (data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    this.rounds(w);
  }

  private rounds(w: Uint32Array): void {
    const s = this.state;
    let a = s[0]!, b = s[1]!, c = s[2]!, d = s[3]!, e = s[4]!, f = s[5]!, g = s[6]!, h = s[7]!;
    for (let i = 0; i < 64; i++) {
      const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const choice = (e & f) ^ (~e & g);
      const t1 = (h + sum1 + choice + ROUND_CONSTANTS[i]! + w[i]!) | 0;
      const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const majority = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (sum0 + majority) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    s[0] = (s[0]! + a) | 0;
    s[1] = (s[1]! + b) | 0;
    s[2] = (s[2]! + c) | 0;
    s[3] = (s[3]! + d) | 0;
    s[4] = (s[4]! + e) | 0;
    s[5] = (s[5]! + f) | 0;
    s[6] = (s[6]! + g) | 0;
    s[7] = (s[7]! + h) | 0;
  }
}

/** SHA-256 of the concatenation of `chunks`. */
export function sha256(...chunks: readonly Uint8Array[]): Uint8Array {
  const hash = new Sha256();
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest();
}
