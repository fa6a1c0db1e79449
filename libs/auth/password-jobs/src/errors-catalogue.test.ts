import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PASSWORD_ERROR_CODES, PASSWORD_JOB_FAILURES } from './index';

describe('docs/errors.md', () => {
  it('documents every PasswordError code in the first table and nothing else', () => {
    const catalogue = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const firstTable = catalogue.split('## Failure reasons')[0]!;
    const documented = [...firstTable.matchAll(/^\| `(ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...PASSWORD_ERROR_CODES].sort());
  });

  it('documents every worker failure code in the second table', () => {
    const catalogue = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const secondTable = catalogue.split('## Failure reasons')[1]!;
    const documented = [...secondTable.matchAll(/^\| `(ERR_PASSWORD_JOB_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...PASSWORD_JOB_FAILURES].sort());
  });
});
