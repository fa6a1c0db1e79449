import { describe, expect, it } from 'vitest';
import { flowDepthExceeds, precheckDocuments } from './document-precheck';
import { DEFAULT_LOAD_LIMITS } from './limits';
import { loadResources } from './load-resources';

const exceeds = (text: string, limit = 4) => flowDepthExceeds(text, 0, text.length, limit);

describe('flow nesting measured on the raw text', () => {
  it('counts flow collections, not brackets inside quoted scalars or comments', () => {
    expect(exceeds('a: [[[[[x]]]]]')).toBe(true);
    expect(exceeds('a: [[[[x]]]]')).toBe(false);
    expect(exceeds('a: "[[[[[[[[" # [[[[[[[[\nb: \'{{{{{{{{\'')).toBe(false);
    expect(exceeds('a: "\\"[[[[[[" \nb: [[[[[x]]]]]')).toBe(true);
    expect(exceeds('a: [x], [y], [z], {p: [q]}')).toBe(false);
  });
});

describe('document limits enforced before parsing', () => {
  it('blanks an oversized or too deeply nested document, keeping lines and document indices', () => {
    const text = 'a: 1\n---\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n---\nc: 3\n';
    const result = precheckDocuments(text, DEFAULT_LOAD_LIMITS);
    expect(result.problems).toEqual([{ code: 'MESH_NESTING_TOO_DEEP', message: 'nesting is deeper than 64 levels', position: { line: 3, column: 1 } }]);
    expect(result.text.split('\n')).toEqual(['a: 1', '---', '', '---', 'c: 3', '']);
  });

  it('rejects a megabyte of nesting at once instead of parsing it', () => {
    const started = performance.now();
    const result = loadResources(`a: ${'['.repeat(1_000_000)}`, { sourceName: 'deep.yaml' });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result.diagnostics.map((d) => [d.code, d.position?.line])).toEqual([['MESH_NESTING_TOO_DEEP', 1]]);
  });

  it('cuts documents beyond the limit off before parsing them', () => {
    const started = performance.now();
    const result = loadResources('x: 1\n---\n'.repeat(300_000), { sourceName: 'many.yaml' });
    expect(performance.now() - started).toBeLessThan(5_000);
    const tooMany = result.diagnostics.find((d) => d.code === 'MESH_TOO_MANY_DOCUMENTS');
    expect(tooMany?.message).toBe('input has 300001 documents, more than the limit of 1000; the rest are ignored');
    expect(tooMany?.position?.line).toBe(2001);
  });
});
