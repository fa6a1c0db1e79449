/** 32-bit hashing helpers for model states and memo keys. Pure integer math, deterministic. */

/** The MurmurHash3 32-bit finalizer: spreads every input bit over the whole word. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** Order-dependent combination of two 32-bit hashes. */
export function combineHashes(a: number, b: number): number {
  return mix32(Math.imul(a ^ 0x9e3779b9, 31) + b);
}

/** FNV-1a over the UTF-16 code units of a string, finalized with {@link mix32}. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** A hash of a string, a finite number or null (distinct tags keep `1` and `'1'` apart). */
export function hashScalar(value: string | number | null): number {
  if (value === null) return 0x2545f491;
  if (typeof value === 'number') {
    return Number.isInteger(value) && Math.abs(value) < 0x8000_0000
      ? mix32(value ^ 0x6a09e667)
      : hashString(`n${value}`);
  }
  return hashString(value);
}
