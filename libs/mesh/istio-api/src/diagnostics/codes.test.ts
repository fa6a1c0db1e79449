import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADVICE_CODES, ANALYZER_CODES, CRD_CODES, LOAD_CODES, MESH_CONFIG_CODES, WEBHOOK_CODES } from '../index';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const ALL = [...LOAD_CODES, ...WEBHOOK_CODES, ...CRD_CODES, ...ANALYZER_CODES, ...ADVICE_CODES, ...MESH_CONFIG_CODES];

describe('diagnostic code catalogue', () => {
  it('documents every code in the README', () => {
    expect(ALL.filter((code) => !README.includes(`\`${code}\``))).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    const documented = [...README.matchAll(/`((?:MESH|META|SELECTOR|TARGET_REF|AP|PA|CRD|ADVICE)_[A-Z_]+|IST\d{4})`/g)].map((match) => match[1]);
    expect(documented.filter((code) => !ALL.includes(code as (typeof ALL)[number]))).toEqual([]);
  });

  it('never reuses a code', () => {
    expect(new Set(ALL).size).toBe(ALL.length);
  });
});
