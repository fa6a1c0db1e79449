import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, prefixRangeEnd, utf8 } from '@ward/shared/bytes';
import { AccessIndex, endWithinPrefix } from './access-index';
import { PermissionType, isOpenEnded, type Permission } from './permission';

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

describe('AccessIndex view lifecycle', () => {
  const grant = (key: string, rangeEnd: string): Permission => ({ permType: PermissionType.READWRITE, key: utf8(key), rangeEnd: utf8(rangeEnd) });
  const none = new Uint8Array(0);

  it('answers from the AnchoredView once settled, drops it on a change, and agrees before and after', () => {
    const index = new AccessIndex();
    index.add(grant('/a/', '/a0'));
    index.add(grant('/b/1', '/b/5'));
    index.add(grant('/c', ''));
    const expectAnswers = (): void => {
      expect(index.permits(utf8('/a/x'), none)).toBe(true);
      expect(index.permits(utf8('/b/3'), utf8('/b/4'))).toBe(true);
      expect(index.permits(utf8('/b/3'), utf8('/b/6'))).toBe(false);
      expect(index.permits(utf8('/c'), none)).toBe(true);
      expect(index.permits(utf8('/c0'), none)).toBe(false);
    };
    expectAnswers();
    expect(index.hasView).toBe(false);
    expectAnswers(); // ten checks since the last change: past the minimum of eight
    expect(index.hasView).toBe(true);
    expectAnswers();
    index.add(grant('/b/5', '/b/7')); // touches [/b/1, /b/5): now [/b/1, /b/7)
    expect(index.hasView).toBe(false);
    expect(index.permits(utf8('/b/3'), utf8('/b/6'))).toBe(true);
    for (let i = 0; i < 8; i++) index.permits(utf8('/z'), none);
    expect(index.hasView).toBe(true);
    expect(index.permits(utf8('/b/3'), utf8('/b/6'))).toBe(true);
    expect(index.permits(utf8('/b/3'), utf8('/b/8'))).toBe(false);
  });
});
