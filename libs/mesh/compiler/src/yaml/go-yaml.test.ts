import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { toGoYaml, formatNumber } from './go-yaml';
import { compareGoYamlKeys } from './go-yaml-keys';
import { selectScalarStyle } from './go-yaml-scalar';

const BUILDER_DIR = join(import.meta.dirname, '../../testdata/istio/pilot/pkg/security/authz/builder/testdata');

describe('toGoYaml reproduces istiod golden files', () => {
  const files = ['http', 'tcp'].flatMap((dir) =>
    readdirSync(join(BUILDER_DIR, dir))
      .filter((f) => /-out\d*\.yaml$/u.test(f))
      .map((f) => join(dir, f)),
  );
  it('finds the golden outputs', () => {
    expect(files.length).toBe(63);
  });
  for (const file of files) {
    it(`re-emits ${file} byte for byte`, () => {
      const text = readFileSync(join(BUILDER_DIR, file), 'utf8');
      expect(toGoYaml(parse(text))).toBe(text);
    });
  }
});

describe('go-yaml scalar styles', () => {
  const cases: Array<[string, string]> = [
    ['plain', 'plain'],
    ['', 'double'],
    ['@type', 'single'],
    [':authority', 'plain'],
    ['*-suffix', 'single'],
    ['- x', 'single'],
    ['a: b', 'single'],
    ['a #b', 'single'],
    ['true', 'double'],
    ['yes', 'double'],
    ['~', 'double'],
    ['9000', 'double'],
    ['0x1F', 'double'],
    ['1e3', 'double'],
    ['.5', 'double'],
    ['1:20', 'double'],
    ['2001-12-14', 'double'],
    ['v1.2', 'plain'],
    ['tab\there', 'double'],
    [' lead', 'single'],
    ["it's", 'plain'],
  ];
  for (const [value, style] of cases) {
    it(`writes ${JSON.stringify(value)} ${style}`, () => {
      expect(selectScalarStyle(value, false)).toBe(style);
    });
  }
  it('escapes and quotes as go-yaml does', () => {
    expect(toGoYaml({ a: '', b: "'x'", c: 'tab\tx', d: '@' })).toBe(`a: ""\nb: '''x'''\nc: "tab\\tx"\nd: '@'\n`);
  });
  it('writes empty collections in flow style and nested sequences compactly', () => {
    expect(toGoYaml({ rules: {}, list: [], nested: [[1, 2], { k: 'v' }] })).toBe('list: []\nnested:\n- - 1\n  - 2\n- k: v\nrules: {}\n');
  });
  it('folds long plain scalars at spaces past column 80', () => {
    const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const out = toGoYaml({ key: long });
    expect(out.split('\n')[0]!.length).toBeGreaterThan(80);
    expect(out.split('\n')[1]!.startsWith('  word')).toBe(true);
    expect(parse(out)).toEqual({ key: long });
  });
  it('writes keys longer than 128 characters as complex keys', () => {
    const key = 'k'.repeat(130);
    const out = toGoYaml({ [key]: { a: 1 } });
    expect(out).toBe(`? ${key}\n: a: 1\n`);
    expect(parse(out)).toEqual({ [key]: { a: 1 } });
  });
  it('formats numbers as Go does', () => {
    expect(formatNumber(32)).toBe('32');
    expect(formatNumber(0.5)).toBe('0.5');
    expect(formatNumber(1e21)).toBe('1e+21');
    expect(formatNumber(1e-7)).toBe('1e-07');
  });
});

describe('go-yaml key order', () => {
  it('compares digit runs numerically and puts non-letters first', () => {
    const keys = ['rule[10]', 'rule[2]', 'rule[1]', 'ignoreCase', 'exact', '@type', 'rules', 'name', 'a0', 'a00', 'a1'];
    expect([...keys].sort(compareGoYamlKeys)).toEqual(['@type', 'a0', 'a00', 'a1', 'exact', 'ignoreCase', 'name', 'rule[1]', 'rule[2]', 'rule[10]', 'rules']);
  });
});
