import { describe, expect, it } from 'vitest';
import { parseCommandLine, parseLabels } from './parse-args';

describe('parseCommandLine', () => {
  it('reads a validate command with inputs and flags', () => {
    const parsed = parseCommandLine(['validate', 'a.yaml', 'dir', '-', '--strict', '-o', 'json', '-n', 'foo']);
    expect(parsed.ok && parsed.args).toMatchObject({ command: 'validate', inputs: ['a.yaml', 'dir', '-'], strict: true, output: 'json', namespace: 'foo' });
  });

  it('reads a workload with labels', () => {
    const parsed = parseCommandLine(['compile', 'p.yaml', '--workload', 'foo/httpbin', '--labels', 'app=httpbin,version=v1']);
    expect(parsed.ok && parsed.args.workload).toEqual({ namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin', version: 'v1' } });
  });

  it('defaults to help without a command', () => {
    expect(parseCommandLine([])).toMatchObject({ ok: true, args: { command: 'help' } });
  });

  const bad: [string[], RegExp][] = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['validate', '--frob'], /Unknown option '--frob'/],
    [['validate', '-o', 'xml'], /expected text, json or yaml/],
    [['compile', '--workload', 'httpbin'], /expected <namespace>\/<name>/],
    [['compile', '--workload', 'Foo/x'], /expected <namespace>\/<name>/],
    [['compile', '--labels', 'a=b'], /--labels needs --workload/],
    [['compile', '--workload', 'a/b', '--labels', 'novalue'], /expected key=value/],
    [['validate', '--strict=yes'], /does not take an argument/],
  ];
  it.each(bad)('rejects %j', (argv, message) => {
    const parsed = parseCommandLine(argv);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});

describe('parseLabels', () => {
  it('allows empty values and trims around separators', () => {
    expect(parseLabels('a=1, b=')).toEqual({ a: '1', b: '' });
  });

  it('limits the number of labels', () => {
    expect(parseLabels(Array.from({ length: 65 }, (_, i) => `k${i}=v`).join(','))).toMatch(/at most 64/);
  });
});
