import { describe, expect, it } from 'vitest';
import { TextTail } from './text-tail';

describe('TextTail', () => {
  it('keeps the last maxChars characters across chunks', () => {
    const tail = new TextTail(5);
    tail.append(Buffer.from('abc'));
    expect(tail.toString()).toBe('abc');
    tail.append(Buffer.from('defg'));
    expect(tail.toString()).toBe('cdefg');
    expect(`${tail}`).toBe('cdefg');
  });
});
