/**
 * The real `ward-mesh` process as a CI pipeline and a hostile environment use it: `explain
 * --expect` exit codes, `--mesh-config` for CUSTOM policies, hostile inputs, and the esbuild
 * bundle run directly and through the launcher.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const WORKSPACE = resolve(__dirname, '..', '..', '..');
const BIN = resolve(__dirname, '..', 'bin', 'ward-mesh.mjs');
const BUNDLE = join(WORKSPACE, 'dist', 'apps', 'mesh-compiler', 'main.js');
const STACK_TRACE = /\n\s+at \S.*(?:\(|:\d+:\d+)/u;

const POLICIES = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: foo}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ext, namespace: foo}
spec:
  action: CUSTOM
  provider: {name: opa}
  rules: [{to: [{operation: {paths: ["/reports*"]}}]}]
`;
const MESH_CONFIG = `apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |-
    extensionProviders:
    - name: opa
      envoyExtAuthzHttp:
        service: opa.security.svc.cluster.local
        port: 8181
`;

function fixture(files: Record<string, string | Uint8Array>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-mesh-ci-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const dir = fixture({ 'policies.yaml': POLICIES, 'mesh.yaml': MESH_CONFIG });
const EXPLAIN = ['explain', join(dir, 'policies.yaml'), '--workload', 'foo/httpbin', '--ports', '8080/HTTP,9000/TCP', '--mesh-config', join(dir, 'mesh.yaml')];

function run(command: string[], input?: string | Uint8Array, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, command, { input, encoding: 'utf8', cwd: tmpdir(), timeout: 60_000, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  expect(result.error).toBeUndefined();
  expect(`${result.stdout}${result.stderr}`).not.toMatch(STACK_TRACE);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const wardMesh = (args: string[], input?: string | Uint8Array) => run([BIN, ...args], input);

describe('explain --expect in a pipeline', () => {
  it.each([
    ['/admin', 'mtls', 'deny', 0],
    ['/admin', 'mtls', 'allow', 1],
    ['/status', 'mtls', 'allow', 0],
    ['/status', 'plaintext', 'reset', 0],
    ['/status', 'plaintext', 'allow', 1],
  ])('GET %s over %s --expect %s exits %i', (path, tls, expected, status) => {
    const result = wardMesh([...EXPLAIN, '--path', path, '--tls', tls, '--expect', expected]);
    expect(result.status).toBe(status);
    expect(result.stdout).toMatch(/^(ALLOWED|DENIED|RESET): GET /u);
    if (status === 1) expect(result.stderr).toMatch(/ward-mesh: expected \w+, but the decision is \w+ \(\S+\)\n$/u);
  });

  it('follows the external authorizer of a CUSTOM policy configured by --mesh-config', () => {
    expect(wardMesh([...EXPLAIN, '--path', '/reports/q3', '--ext-authz', 'deny', '--expect', 'deny']).status).toBe(0);
    const allowed = wardMesh([...EXPLAIN, '--path', '/reports/q3', '--expect', 'allow', '-o', 'json']);
    expect(allowed.status).toBe(0);
    const document = JSON.parse(allowed.stdout) as { expectation: unknown; result: { filters: Array<{ name: string; extAuthz?: unknown }> } };
    expect(document.expectation).toMatchObject({ expected: 'allow', matched: true });
    expect(document.result.filters.map((filter) => filter.name)).toEqual(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.rbac']);
    expect(document.result.filters[1]?.extAuthz).toEqual({ enabled: true, decision: 'allow' });
  });

  it('exits 2 on a bad --expect value', () => {
    const result = wardMesh([...EXPLAIN, '--expect', 'maybe']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('ward-mesh: --expect: expected allow, deny or reset, got "maybe"\nRun "ward-mesh help" for usage.\n');
  });
});

describe('hostile input to the process', () => {
  it('random bytes on stdin: exit 1 with a diagnostic', () => {
    const result = wardMesh(['validate', '-'], randomBytes(64 * 1024));
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('Error: 1 error occurred:\n\t* - is not valid UTF-8 text\n\n\n');
  });

  it('10 MB on stdin and a megabyte of nesting: exit 1 with the limit that was hit', () => {
    // stdin from a file: the process stops reading at the limit, which a pipe would report as EPIPE.
    const big = fixture({ 'big.yaml': 'a'.repeat(10 * 1024 * 1024) });
    const stdin = openSync(join(big, 'big.yaml'), 'r');
    const result = spawnSync(process.execPath, [BIN, 'validate', '-'], { stdio: [stdin, 'pipe', 'pipe'], encoding: 'utf8', timeout: 60_000 });
    closeSync(stdin);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('input is more than 4194304 bytes, more than the limit of 4194304');
    const deep = wardMesh(['validate', '-'], `a: ${'['.repeat(1024 * 1024 - 8)}`);
    expect(deep.status).toBe(1);
    expect(deep.stderr).toContain('line 1: nesting is deeper than 64 levels');
  });

  it('a FIFO and a binary file: exit 1 at once, no waiting for a writer', () => {
    const hostile = fixture({ 'binary.yaml': randomBytes(4096) });
    execFileSync('mkfifo', [join(hostile, 'pipe.yaml')]);
    const result = wardMesh(['validate', join(hostile, 'pipe.yaml'), join(hostile, 'binary.yaml')]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`"${join(hostile, 'pipe.yaml')}" is not a regular file`);
    expect(result.stderr).toContain(`${join(hostile, 'binary.yaml')} is not valid UTF-8 text`);
  });

  it('a directory of thousands of files: the first thousand are read, then exit 1', () => {
    const many = fixture(Object.fromEntries(Array.from({ length: 3_000 }, (_, index) => [`p${String(index).padStart(4, '0')}.yaml`, `a${index}: 1\n`])));
    const result = wardMesh(['validate', many, '-o', 'json']);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as { inputs: Array<{ diagnostics: Array<{ message: string }> }> };
    expect(report.inputs.flatMap((input) => input.diagnostics.map((d) => d.message))).toContain('more than 1000 input files');
  });
});

describe('the esbuild bundle', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [join(WORKSPACE, 'tools', 'build-app.mjs'), 'apps/mesh-compiler'], { cwd: WORKSPACE, stdio: 'pipe' });
  });

  it('validates and explains when run with node directly', () => {
    const validate = run([BUNDLE, 'validate', join(dir, 'policies.yaml')]);
    expect(validate.status).toBe(0);
    expect(validate.stdout).toContain(`"${join(dir, 'policies.yaml')}" has warnings:`);
    expect(run([BUNDLE, ...EXPLAIN, '--path', '/admin', '--expect', 'deny']).status).toBe(0);
    expect(run([BUNDLE, 'validate', '-'], randomBytes(1024)).status).toBe(1);
  });

  it('is what the launcher runs without tsx', () => {
    const result = run([BIN, ...EXPLAIN, '--path', '/status', '--tls', 'plaintext', '--expect', 'reset'], undefined, { WARD_MESH_LAUNCH: 'bundle' });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^RESET: GET \/status/u);
  });
});
