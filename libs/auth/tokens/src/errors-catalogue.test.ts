import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TOKEN_ERROR_CODES, TOKEN_INVALID_REASONS } from './index';

const catalogue = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

describe('docs/errors.md', () => {
  it('documents every code and nothing else', () => {
    const documented = [...catalogue.matchAll(/^\| `(ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...TOKEN_ERROR_CODES].sort());
  });
  it('lists every invalid-token reason', () => {
    for (const reason of TOKEN_INVALID_REASONS) expect(catalogue).toContain(`\`${reason}\``);
  });
});
