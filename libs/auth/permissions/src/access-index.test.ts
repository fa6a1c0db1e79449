import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, prefixRangeEnd } from '@ward/shared/bytes';
import { endWithinPrefix } from './access-index';
import { isOpenEnded } from './permission';

describe('endWithinPrefix', () => {
  it('equals "end ≤ prefixEnd(key[0..length))" for every end above the key', () => {
    const bytes = fc.array(fc.constantFrom(0x00, 0x01, 0x61, 0xfe, 0xff), { minLength: 1, maxLength: 5 }).map((a) => Uint8Array.from(a));
    fc.assert(
      fc.property(bytes, bytes, fc.nat(), (key, end, pick) => {
        fc.pre(compareBytes(end, key) > 0);
        const length = 1 + (pick % key.length);
        const prefixEnd = prefixRangeEnd(key.subarray(0, length));
        const expected = isOpenEnded(prefixEnd) || compareBytes(end, prefixEnd) <= 0;
        expect(endWithinPrefix(key, length, end)).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });
});
