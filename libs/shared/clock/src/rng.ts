/** A source of randomness, injected so that domain code is replayable from a seed. */
export interface Rng {
  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number;
  /** A float in [0, 1). */
  nextFloat(): number;
  /** An integer in [0, bound), bound in [1, 2^32]. */
  nextInt(bound: number): number;
}

const UINT32_RANGE = 0x1_0000_0000;

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator), seeded through splitmix32 so that
 * nearby seeds give unrelated streams. Deterministic across platforms: pure 32-bit integer math.
 */
export class SeededRng implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new TypeError(`SeededRng: seed must be an integer, got ${seed}`);
    let state = seed >>> 0;
    const splitmix = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  nextFloat(): number {
    return this.nextUint32() / UINT32_RANGE;
  }

  nextInt(bound: number): number {
    if (!Number.isInteger(bound) || bound < 1 || bound > UINT32_RANGE) {
      throw new TypeError(`SeededRng.nextInt: bound must be an integer in [1, 2^32], got ${bound}`);
    }
    // Rejection sampling removes modulo bias.
    const limit = UINT32_RANGE - (UINT32_RANGE % bound);
    for (;;) {
      const value = this.nextUint32();
      if (value < limit) return value % bound;
    }
  }

  /** A new generator whose stream is independent of this one's future output. */
  fork(): SeededRng {
    return new SeededRng(this.nextUint32());
  }
}
