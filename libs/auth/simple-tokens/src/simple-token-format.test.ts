import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import {
  SIMPLE_TOKEN_ALPHABET,
  formatSimpleToken,
  generateSimpleTokenPrefix,
  isSimpleTokenPrefix,
  parseSimpleToken,
  sealSimpleToken,
  sealSimpleTokenPrefix,
} from './index';

describe('generateSimpleTokenPrefix', () => {
  it('draws 16 letters from [a-zA-Z], replayable from a seed', () => {
    const a = generateSimpleTokenPrefix(new SeededRng(9));
    const b = generateSimpleTokenPrefix(new SeededRng(9));
    const c = generateSimpleTokenPrefix(new SeededRng(10));
    expect(a).toMatch(/^[a-zA-Z]{16}$/);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('uses all 52 letters about uniformly (chi-square, 51 degrees of freedom)', () => {
    const rng = new SeededRng(3);
    const counts = new Map<string, number>();
    const prefixes = 5000;
    for (let i = 0; i < prefixes; i++) {
      for (const letter of generateSimpleTokenPrefix(rng)) counts.set(letter, (counts.get(letter) ?? 0) + 1);
    }
    expect(counts.size).toBe(52);
    const expected = (prefixes * 16) / 52;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    expect(chiSquare).toBeLessThan(90); // p = 0.001 at 51 dof is ~87.
    expect([...counts.keys()].every((letter) => SIMPLE_TOKEN_ALPHABET.includes(letter))).toBe(true);
  });
});

describe('formatSimpleToken / parseSimpleToken', () => {
  it("parses the token etcd 3.4.23 issued in the spec's live session", () => {
    expect(parseSimpleToken('qLVEbLmctfpktPPy.51')).toEqual({ prefix: 'qLVEbLmctfpktPPy', index: 51 });
  });

  it('round-trips every generated token', () => {
    const rng = new SeededRng(1);
    for (let index = 1; index < 2000; index += 37) {
      const prefix = generateSimpleTokenPrefix(rng);
      expect(parseSimpleToken(formatSimpleToken(prefix, index))).toEqual({ prefix, index });
    }
    expect(parseSimpleToken(formatSimpleToken('abcdefghijklmnop', Number.MAX_SAFE_INTEGER))?.index).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([
    ['empty', ''],
    ['no dot', 'abcdefghijklmnop'],
    ['empty index', 'abcdefghijklmnop.'],
    ['two dots', 'abcdefghijklmnop.1.2'],
    ['short prefix', 'abcdefghijklmno.1'],
    ['long prefix', 'abcdefghijklmnopq.1'],
    ['digit in prefix', 'abcdefghijklmno1.1'],
    ['non-ASCII letter in prefix', 'abcdefghijklmnoé.1'],
    ['index zero', 'abcdefghijklmnop.0'],
    ['leading zero', 'abcdefghijklmnop.051'],
    ['signed index', 'abcdefghijklmnop.+5'],
    ['negative index', 'abcdefghijklmnop.-5'],
    ['hex index', 'abcdefghijklmnop.0x10'],
    ['space', 'abcdefghijklmnop. 5'],
    ['index beyond 2^53-1', 'abcdefghijklmnop.9007199254740992'],
    ['uint64 max', 'abcdefghijklmnop.18446744073709551615'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJ1c2VybmFtZSI6InJvb3QifQ.sig'],
    ['Bearer prefix left on', 'Bearer abcdefghijklmnop.5'],
    ['oversized', `${'a'.repeat(16)}.${'1'.repeat(10_000)}`],
  ])('rejects %s', (_name, token) => {
    expect(parseSimpleToken(token)).toBeUndefined();
  });

  it('refuses to format what it would not parse (programmer error)', () => {
    expect(() => formatSimpleToken('short', 1)).toThrow(/assertion failed/);
    expect(() => formatSimpleToken('abcdefghijklmnop', 0)).toThrow(/assertion failed/);
    expect(() => formatSimpleToken('abcdefghijklmnop', 1.5)).toThrow(/assertion failed/);
    expect(isSimpleTokenPrefix('abcdefghijklmnoP')).toBe(true);
    expect(isSimpleTokenPrefix('abcdefghijklmno_')).toBe(false);
  });
});

describe('sealSimpleTokenPrefix / sealSimpleToken', () => {
  it('is a deterministic 16-letter form that differs from the prefix and keeps the index', () => {
    const prefix = 'qLVEbLmctfpktPPy';
    const sealed = sealSimpleTokenPrefix(prefix);
    expect(isSimpleTokenPrefix(sealed)).toBe(true);
    expect(sealed).not.toBe(prefix);
    expect(sealSimpleTokenPrefix(prefix)).toBe(sealed);
    expect(sealSimpleToken(`${prefix}.51`)).toBe(`${sealed}.51`);
  });

  it('a sealed token is not usable: sealing it again gives another token', () => {
    const sealed = sealSimpleToken('qLVEbLmctfpktPPy.7')!;
    expect(sealSimpleToken(sealed)).not.toBe(sealed);
  });

  it('distinct prefixes seal to distinct forms, spread over the whole alphabet', () => {
    const rng = new SeededRng(4);
    const seen = new Set<string>();
    const letters = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const sealed = sealSimpleTokenPrefix(generateSimpleTokenPrefix(rng));
      seen.add(sealed);
      for (const letter of sealed) letters.add(letter);
    }
    expect(seen.size).toBe(2000);
    expect(letters.size).toBe(52);
  });

  it('malformed tokens have no sealed form', () => {
    expect(sealSimpleToken('garbage')).toBeUndefined();
    expect(sealSimpleToken('abcdefghijklmnop.0')).toBeUndefined();
  });
});
