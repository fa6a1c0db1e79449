/** Runs the real `ward-mesh` executable as a child process. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = resolve(__dirname, '..', 'bin', 'ward-mesh.mjs');

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

function wardMesh(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8', cwd: tmpdir(), timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-mesh-cli-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('ward-mesh validate as a process', () => {
  const dir = fixture({
    'deny.yaml': DENY_GET,
    'ok.yaml': DENY_GET.replace('methods: ["GET"]', 'ports: ["8080"]'),
    'bad.yaml': DENY_GET.replace('methods: ["GET"]', 'methods: [""]'),
  });

  it('exits 0 for a valid file', () => {
    expect(wardMesh(['validate', join(dir, 'ok.yaml')])).toEqual({ status: 0, stdout: `"${join(dir, 'ok.yaml')}" is valid\n`, stderr: '' });
  });

  it('exits 0 on warnings and 1 with --strict', () => {
    const relaxed = wardMesh(['validate', join(dir, 'deny.yaml')]);
    expect(relaxed.status).toBe(0);
    expect(relaxed.stdout).toContain('has warnings: \n\t* AuthorizationPolicy//deny-get: configured AuthorizationPolicy will deny all traffic');
    expect(wardMesh(['validate', '--strict', join(dir, 'deny.yaml')]).status).toBe(1);
  });

  it('exits 1 with istioctl\'s error text and the line for an invalid policy in a directory', () => {
    const result = wardMesh(['validate', dir]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `* AuthorizationPolicy//deny-get: invalid policy deny-get.default: empty value not allowed, found in Methods (at ${join(dir, 'bad.yaml')}:10, spec.rules[0].to[0].operation.methods[0])`,
    );
  });

  it('reads stdin and prints JSON', () => {
    const result = wardMesh(['validate', '-', '-o', 'json'], DENY_GET);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ valid: true, inputs: [{ source: '-', resources: [{ name: 'deny-get' }] }] });
  });

  it('exits 1 on invalid YAML and 2 on a usage error, never with a stack trace', () => {
    const yaml = wardMesh(['validate', '-'], 'kind: [');
    expect(yaml.status).toBe(1);
    expect(yaml.stderr).toMatch(/^Error: 1 error occurred:\n\t\* failed to decode file -: line \d+: invalid YAML/);
    const usage = wardMesh(['validate', '--no-such-flag']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^ward-mesh: Unknown option '--no-such-flag'/);
    expect(`${yaml.stderr}${usage.stderr}`).not.toMatch(/\n\s+at /);
  });
});

describe('ward-mesh compile as a process', () => {
  const dir = fixture({ 'deny.yaml': DENY_GET.replace('name: deny-get', 'name: deny-get\n  namespace: foo') });

  it('writes the compiled filters and listener as YAML and exits 0', () => {
    const result = wardMesh(['compile', join(dir, 'deny.yaml'), '--workload', 'foo/httpbin', '--labels', 'app=httpbin', '--ports', '8080/HTTP,9000/TCP']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('name: envoy.filters.http.rbac');
    expect(result.stdout).toContain('ns[foo]-policy[deny-get]-rule[0]');
    expect(result.stdout).toContain('name: virtualInbound');
    expect(result.stderr).toContain(`${join(dir, 'deny.yaml')}:9: warning [AP_DENY_HTTP_ONLY]`);
  });

  it('exits 2 without a workload and 1 on invalid input', () => {
    expect(wardMesh(['compile', join(dir, 'deny.yaml')]).status).toBe(2);
    const invalid = wardMesh(['compile', '-', '--workload', 'foo/httpbin'], 'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: x}\nspec: {action: DENY}\n');
    expect(invalid.status).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toContain('error [AP_DENY_WITHOUT_RULES]');
  });
});

describe('ward-mesh explain as a process', () => {
  const dir = fixture({ 'deny.yaml': DENY_GET.replace('name: deny-get', 'name: deny-get\n  namespace: foo') });

  it('says which filter and policy rule decided a request', () => {
    const result = wardMesh(['explain', join(dir, 'deny.yaml'), '--workload', 'foo/httpbin', '--ports', '8080/HTTP', '--port', '8080', '--method', 'GET', '--path', '/x']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^DENIED: GET \/x /);
    expect(result.stdout).toContain('response: 403 "RBAC: access denied" (rbac_access_denied_matched_policy[ns[foo]-policy[deny-get]-rule[0]])');
  });
});

describe('ward-mesh serve as a process', () => {
  it('serves POST /validate on a real socket and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, MESH_COMPILER_HTTP_PORT: '0', MESH_COMPILER_LOG_LEVEL: 'info', MESH_COMPILER_PROCESS_METRICS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolvePort, reject) => {
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const match = /"port":(\d+)/.exec(buffered);
        if (match !== null) resolvePort(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`serve exited early with ${code}`)));
    });
    const response = await fetch(`http://127.0.0.1:${port}/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'deny.yaml', content: DENY_GET }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ valid: true, exitCode: 0 });
    const exitCode = await new Promise<number | null>((resolveExit) => {
      child.once('exit', (code) => resolveExit(code));
      child.kill('SIGTERM');
    });
    expect(exitCode).toBe(0);
  });

  it('refuses a bad configuration with exit 2', () => {
    const result = spawnSync(process.execPath, [BIN, 'serve'], { env: { ...process.env, MESH_COMPILER_HTTP_PORT: 'eighty' }, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('MESH_COMPILER_HTTP_PORT: must be an integer');
  });
});
