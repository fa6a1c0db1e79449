import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIMPLE_TOKEN_ERROR_CODES } from './index';

describe('docs/errors.md', () => {
  it('documents every code and nothing else', () => {
    const catalogue = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const documented = [...catalogue.matchAll(/^\| `(ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...SIMPLE_TOKEN_ERROR_CODES].sort());
  });
});
