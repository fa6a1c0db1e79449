import { randomInt } from 'node:crypto';
import type { Rng } from '@ward/shared/clock';

const UINT32_RANGE = 0x1_0000_0000;

/**
 * A cryptographically strong Rng (node:crypto's CSPRNG), for production simple-token prefixes
 * and anything else that must be unguessable. Tests pass a SeededRng instead.
 */
export class CryptoRng implements Rng {
  nextUint32(): number {
    return randomInt(UINT32_RANGE);
  }

  nextFloat(): number {
    // 53 random bits: exactly representable, uniform in [0, 1).
    return (randomInt(0x20_0000) * UINT32_RANGE + randomInt(UINT32_RANGE)) / 2 ** 53;
  }

  nextInt(bound: number): number {
    if (!Number.isInteger(bound) || bound < 1 || bound > UINT32_RANGE) {
      throw new TypeError(`CryptoRng.nextInt: bound must be an integer in [1, 2^32], got ${bound}`);
    }
    return randomInt(bound);
  }
}
