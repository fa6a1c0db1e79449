import { describe, expect, it } from 'vitest';
import { JsonObjectSplitter, JsonObjectStreamError } from './json-object-stream';

const split = (splitter: JsonObjectSplitter, ...chunks: string[]): string[] => chunks.flatMap((chunk) => splitter.push(Buffer.from(chunk)));

describe('JsonObjectSplitter', () => {
  it('yields objects one per line, back to back, and across chunk boundaries', () => {
    const splitter = new JsonObjectSplitter(1024);
    expect(split(splitter, '{"ID":1}\n{"ID"', ':2}{"a":{"b":[1,{}]}}', '\r\n  ')).toEqual(['{"ID":1}', '{"ID":2}', '{"a":{"b":[1,{}]}}']);
    expect(() => splitter.end()).not.toThrow();
  });

  it('ignores braces and quotes inside strings', () => {
    const splitter = new JsonObjectSplitter(1024);
    expect(split(splitter, '{"k":"}{\\"', '}"}')).toEqual(['{"k":"}{\\"}"}']);
  });

  it('keeps a multi-byte character split across chunks', () => {
    const splitter = new JsonObjectSplitter(1024);
    const bytes = Buffer.from('{"k":"é"}');
    expect([...splitter.push(bytes.subarray(0, 7)), ...splitter.push(bytes.subarray(7))]).toEqual(['{"k":"é"}']);
  });

  it('refuses what is not an object, and every chunk after', () => {
    const splitter = new JsonObjectSplitter(1024);
    expect(() => split(splitter, '{"a":1} [')).toThrow(JsonObjectStreamError);
    expect(() => split(splitter, '{}')).toThrow(JsonObjectStreamError);
  });

  it('refuses an object longer than the bound, complete or not', () => {
    expect(() => split(new JsonObjectSplitter(16), `{"k":"${'x'.repeat(20)}"}`)).toThrow('request message too large');
    const open = new JsonObjectSplitter(16);
    expect(() => split(open, '{"k":"', 'x'.repeat(10), 'x'.repeat(10))).toThrow('request message too large');
  });

  it('reports a body that ends inside an object', () => {
    const splitter = new JsonObjectSplitter(1024);
    split(splitter, '{"ID":1}{"ID"');
    expect(() => splitter.end()).toThrow('unexpected EOF');
  });
});
