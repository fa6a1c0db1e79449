import { describe, expect, it } from 'vitest';
import { uniquePrefix } from './index';

// The Redis-touching helpers are exercised by the integration tests that use them.
describe('uniquePrefix', () => {
  it('differs every call and stays a valid queue prefix', () => {
    const a = uniquePrefix('x');
    const b = uniquePrefix('x');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });
});
