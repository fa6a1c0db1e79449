import { describe, expect, it } from 'vitest';
import { generateSimpleTokenPrefix, parseSimpleToken } from '@ward/auth/simple-tokens';
import { CryptoRng } from './index';

describe('CryptoRng', () => {
  it('stays within bounds and covers a small range about uniformly', () => {
    const rng = new CryptoRng();
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const value = rng.nextInt(8);
      counts[value]! += 1;
      const float = rng.nextFloat();
      expect(float >= 0 && float < 1).toBe(true);
      const word = rng.nextUint32();
      expect(Number.isInteger(word) && word >= 0 && word < 2 ** 32).toBe(true);
    }
    const chiSquare = counts.reduce((sum, n) => sum + (n - 2000) ** 2 / 2000, 0);
    expect(chiSquare).toBeLessThan(29); // 7 degrees of freedom: p ≈ 0.0001 at 29
  });

  it('rejects invalid bounds', () => {
    expect(() => new CryptoRng().nextInt(0)).toThrow(TypeError);
    expect(() => new CryptoRng().nextInt(2 ** 32 + 1)).toThrow(TypeError);
  });

  it('generates distinct simple-token prefixes (the production path)', () => {
    const rng = new CryptoRng();
    const prefixes = new Set(Array.from({ length: 1000 }, () => generateSimpleTokenPrefix(rng)));
    expect(prefixes.size).toBe(1000);
    for (const prefix of prefixes) expect(parseSimpleToken(`${prefix}.1`)?.prefix).toBe(prefix);
  });
});
