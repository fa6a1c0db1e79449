import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePathFully, normalizeRequestPath } from './path-normalization';

describe('path normalization shortcut', () => {
  it('returns what the full normalization returns, for paths over a hostile alphabet', () => {
    const path = fc.array(fc.constantFrom('/', '.', '..', '%2e', '%41', '%2F', '\\', '?', '#', 'a', 'b', '~', '%'), { maxLength: 12 }).map((parts) => `/${parts.join('')}`);
    fc.assert(fc.property(path, (p) => normalizeRequestPath(p) === normalizePathFully(p)), { numRuns: 2_000, seed: 7 });
  });

  it('takes the shortcut only for paths that are already normal', () => {
    expect(normalizeRequestPath('/api/v1?x=/../')).toBe('/api/v1?x=/../');
    expect(normalizeRequestPath('/api/./v1')).toBe('/api/v1');
    expect(normalizeRequestPath('/a%2e%2e/b')).toBe('/a../b');
  });
});
