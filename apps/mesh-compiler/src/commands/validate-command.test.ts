import { describe, expect, it } from 'vitest';
import { runValidate } from './validate-command';
import type { ValidateCommandOptions } from './validate-command';

const OPTIONS: ValidateCommandOptions = {
  output: 'text',
  strict: false,
  analyze: false,
  advice: false,
  compat: false,
  defaultNamespace: 'default',
  rootNamespace: 'istio-system',
};

const DENY_GET = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: deny-get
spec:
  action: DENY
  rules:
  - to:
    - operation:
        methods: ["GET"]
`;
const CLEAN = DENY_GET.replace('methods: ["GET"]', 'ports: ["8080"]');
const INVALID = DENY_GET.replace('  action: DENY\n', '').replace('    - operation:\n        methods: ["GET"]', '    - operation: {}');
const UNKNOWN_FIELD = DENY_GET.replace('methods:', 'method:');

function run(files: Record<string, string>, options: Partial<ValidateCommandOptions> = {}) {
  const sources = Object.entries(files).map(([sourceName, text]) => ({ sourceName, text }));
  return runValidate(sources, [], { ...OPTIONS, ...options });
}

describe('validate exit codes', () => {
  it('exits 0 with "is valid" for valid input', () => {
    expect(run({ 'ok.yaml': CLEAN })).toEqual({ stdout: '"ok.yaml" is valid\n', stderr: '', exitCode: 0 });
  });

  it('exits 0 on warnings, like istioctl, and 1 with --strict', () => {
    const relaxed = run({ 'deny.yaml': DENY_GET });
    expect(relaxed.exitCode).toBe(0);
    expect(relaxed.stdout).toContain('"deny.yaml" has warnings: \n\t* AuthorizationPolicy//deny-get: configured AuthorizationPolicy will deny all traffic');
    const strict = run({ 'deny.yaml': DENY_GET }, { strict: true });
    expect(strict.exitCode).toBe(1);
    expect(strict.stderr.endsWith('Error: 1 warning treated as errors (--strict)\n')).toBe(true);
  });

  it('exits 1 on a validation error and prints istioctl\'s Error block on stderr', () => {
    const result = run({ 'bad.yaml': INVALID }, { compat: true });
    expect(result).toEqual({
      stdout: '',
      stderr: 'Error: 1 error occurred:\n\t* AuthorizationPolicy//deny-get: invalid policy deny-get.default: `to.operation` must not be empty, found at rule 0\n\n\n',
      exitCode: 1,
    });
  });

  it('exits 1 on an unknown field, invalid YAML, a wrong kind or a 10 MB document', () => {
    expect(run({ 'u.yaml': UNKNOWN_FIELD }).exitCode).toBe(1);
    expect(run({ 'y.yaml': 'a: [' }).exitCode).toBe(1);
    expect(run({ 'k.yaml': 'apiVersion: example.com/v1\nkind: Widget\n' }).exitCode).toBe(1);
    const huge = run({ 'h.yaml': `a: "${'x'.repeat(10 * 1024 * 1024)}"` });
    expect(huge.exitCode).toBe(1);
    expect(huge.stderr).toContain('input is 10485765 bytes, more than the limit of 4194304');
  });

  it('reports unreadable inputs as failures', () => {
    const result = runValidate([], [{ code: 'MESH_INPUT_UNREADABLE', severity: 'error', origin: 'load', message: 'cannot stat file "x": no such file or directory', sourceName: 'x' }], OPTIONS);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('Error: 1 error occurred:\n\t* cannot stat file "x": no such file or directory\n\n\n');
  });

  it('ignores kinds that are not security resources without failing', () => {
    expect(run({ 'svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\n' })).toEqual({ stdout: '"svc.yaml" is valid\n', stderr: '', exitCode: 0 });
  });
});

describe('validate output formats', () => {
  it('emits a JSON report with resources, lines and diagnostics', () => {
    const result = run({ 'deny.yaml': DENY_GET, 'bad.yaml': INVALID }, { output: 'json' });
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as { valid: boolean; inputs: { source: string; resources: unknown[]; diagnostics: { code: string; path: string; position: { line: number } }[] }[] };
    expect(report.valid).toBe(false);
    expect(report.inputs.map((input) => input.source)).toEqual(['deny.yaml', 'bad.yaml']);
    expect(report.inputs[0]?.resources).toEqual([{ kind: 'AuthorizationPolicy', namespace: '', name: 'deny-get', line: 1 }]);
    expect(report.inputs[1]?.diagnostics.map((d) => [d.code, d.path, d.position.line])).toEqual([['AP_TO_OPERATION_EMPTY', 'spec.rules[0].to[0].operation', 8]]);
  });

  it('emits YAML with -o yaml', () => {
    expect(run({ 'ok.yaml': CLEAN }, { output: 'yaml' }).stdout).toMatch(/^valid: true\nexitCode: 0\ninputs:\n {2}- source: ok.yaml\n/);
  });

  it('prints istioctl analyze lines with --analyze', () => {
    const result = run({ 'a.yaml': `${DENY_GET.replace('name: deny-get', 'name: deny-get\n  namespace: shop')}---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n` }, { analyze: true });
    expect(result.stdout).toBe(
      'Warning [IST0133] (AuthorizationPolicy shop/deny-get a.yaml:9) Schema validation warning: configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port\n' +
        'Warning [IST0127] (AuthorizationPolicy shop/deny-get a.yaml:1) No matching workloads for this resource with the following labels: \n',
    );
    expect(result.exitCode).toBe(0);
  });
});
