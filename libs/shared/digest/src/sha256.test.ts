import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Sha256, sha256 } from './index';

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const text = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('sha256', () => {
  it('matches the FIPS 180-4 example vectors', () => {
    expect(hex(sha256(text('')))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(sha256(text('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha256(text('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('agrees with node:crypto for random inputs split into random chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 6 }), (chunks) => {
        const expected = createHash('sha256');
        const actual = new Sha256();
        for (const chunk of chunks) {
          expected.update(chunk);
          actual.update(chunk);
        }
        expect(hex(actual.digest())).toBe(expected.digest('hex'));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses use after digest', () => {
    const hash = new Sha256();
    hash.digest();
    expect(() => hash.update(Uint8Array.of(1))).toThrow(TypeError);
    expect(() => hash.digest()).toThrow(TypeError);
  });
});
