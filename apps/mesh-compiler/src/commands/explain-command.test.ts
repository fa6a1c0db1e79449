import { describe, expect, it } from 'vitest';
import { compileOptionsFromFlags } from './compile-command';
import { runExplain, trafficFromFlags } from './explain-command';

const ALLOW_FRONTEND = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: allow-frontend, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  rules:
  - from:
    - source: {principals: ["cluster.local/ns/foo/sa/frontend"]}
`;
const DENY_ADMIN = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules:
  - to:
    - operation: {paths: ["/admin*"]}
`;
const STRICT_WITH_EXCEPTION = `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  mtls: {mode: STRICT}
  portLevelMtls:
    "9090": {mode: DISABLE}
`;

function explain(files: Record<string, string>, flags: Record<string, string | string[]>, output: 'text' | 'json' = 'text', expected?: 'allow' | 'deny' | 'reset') {
  const all = { ports: '8080/HTTP,9000/TCP,9090/HTTP', ...flags };
  const options = compileOptionsFromFlags({ namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin' } }, all, output, 'default');
  if (typeof options === 'string') throw new Error(options);
  const traffic = trafficFromFlags(all, options.workload);
  if (typeof traffic === 'string') throw new Error(traffic);
  const sources = Object.entries(files).map(([sourceName, text]) => ({ sourceName, text }));
  return runExplain(sources, [], { ...options, traffic, ...(expected !== undefined ? { expect: expected } : {}) });
}

describe('ward-mesh explain (the design notes\' accidents)', () => {
  it('one ALLOW policy turns other callers into 403 RBAC: access denied', () => {
    const others = explain({ 'allow.yaml': ALLOW_FRONTEND }, { port: '8080', 'source-principal': 'cluster.local/ns/foo/sa/batch' });
    expect(others.exitCode).toBe(0);
    expect(others.stdout).toMatch(/^DENIED: GET \/ \(Host: httpbin\.foo\.svc\.cluster\.local\) over mtls to port 8080 as cluster\.local\/ns\/foo\/sa\/batch\n/);
    expect(others.stdout).toContain('  response: 403 "RBAC: access denied" (rbac_access_denied_matched_policy[none])\n');
    const frontend = explain({ 'allow.yaml': ALLOW_FRONTEND }, { port: '8080', 'source-principal': 'cluster.local/ns/foo/sa/frontend' });
    expect(frontend.stdout).toMatch(/^ALLOWED: /);
    expect(frontend.stdout).toContain('matched ns[foo]-policy[allow-frontend]-rule[0]');
  });

  it('a path-only DENY closes every TCP connection', () => {
    const tcp = explain({ 'deny.yaml': DENY_ADMIN }, { port: '9000' });
    expect(tcp.stdout).toMatch(/^DENIED: a TCP connection over mtls to port 9000/);
    expect(tcp.stdout).toContain('envoy.filters.network.rbac');
    expect(tcp.stdout).toContain('tcp.rbac.denied');
    const http = explain({ 'deny.yaml': DENY_ADMIN }, { port: '8080', path: '/status' });
    expect(http.stdout).toMatch(/^ALLOWED: /);
  });

  it('STRICT resets plaintext callers, except on a DISABLE port', () => {
    const plaintext = explain({ 'pa.yaml': STRICT_WITH_EXCEPTION }, { port: '8080', tls: 'plaintext' });
    expect(plaintext.stdout).toMatch(/^RESET: /);
    expect(plaintext.stdout).toContain('no_filter_chain_match');
    expect(explain({ 'pa.yaml': STRICT_WITH_EXCEPTION }, { port: '9090', tls: 'plaintext' }).stdout).toMatch(/^ALLOWED: /);
    expect(explain({ 'pa.yaml': STRICT_WITH_EXCEPTION }, { port: '8080' }).stdout).toMatch(/^ALLOWED: /);
  });

  it('reports the principal derived from the SAN and the deciding filter as JSON', () => {
    const result = explain({ 'allow.yaml': ALLOW_FRONTEND }, { port: '8080', 'source-principal': 'cluster.local/ns/foo/sa/frontend' }, 'json');
    const body = JSON.parse(result.stdout) as { result: { outcome: string; peerPrincipal: string; decision: { policy: string } } };
    expect(body.result).toMatchObject({ outcome: 'allowed', peerPrincipal: 'spiffe://cluster.local/ns/foo/sa/frontend', decision: { policy: 'ns[foo]-policy[allow-frontend]-rule[0]' } });
  });

  it('does not explain invalid inputs', () => {
    const result = explain({ 'bad.yaml': DENY_ADMIN.replace('["/admin*"]', '[""]') }, { port: '8080' });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('ward-mesh: not explained: the inputs have errors');
  });
});

describe('trafficFromFlags', () => {
  const workload = { namespace: 'foo', name: 'httpbin', labels: {}, ports: [{ port: 9000, protocol: 'TCP' as const }] };

  it('sends a TCP connection to a TCP port unless HTTP flags are given', () => {
    expect(trafficFromFlags({}, workload)).toEqual({ port: 9000, transport: 'mtls' });
    expect(trafficFromFlags({ method: 'POST', header: ['X-Token=a'] }, workload)).toMatchObject({ http: { method: 'POST', path: '/', headers: { 'x-token': 'a' } } });
  });

  it('rejects malformed flags', () => {
    expect(trafficFromFlags({ tls: 'ssl' }, workload)).toMatch(/--tls/);
    expect(trafficFromFlags({ port: '0' }, workload)).toMatch(/--port/);
    expect(trafficFromFlags({ path: 'admin' }, workload)).toMatch(/--path/);
    expect(trafficFromFlags({ header: ['novalue'] }, workload)).toMatch(/--header/);
    expect(trafficFromFlags({}, { ...workload, ports: [] })).toMatch(/--port is needed/);
  });
});

describe('ward-mesh explain --expect (CI pipelines)', () => {
  const expectRun = (files: Record<string, string>, flags: Record<string, string>, expected: 'allow' | 'deny' | 'reset', output: 'text' | 'json' = 'text') =>
    explain(files, flags, output, expected);

  it('exits 0 when the decision is the expected one', () => {
    const result = expectRun({ 'deny.yaml': DENY_ADMIN }, { port: '8080', path: '/admin' }, 'deny');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^DENIED: /);
    expect(result.stderr).not.toContain('expected');
  });

  it('exits 1 and says so when it is not, the explanation still printed', () => {
    const result = expectRun({ 'deny.yaml': DENY_ADMIN }, { port: '8080', path: '/admin' }, 'allow');
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/^DENIED: GET \/admin/);
    expect(result.stderr).toContain('ward-mesh: expected allow, but the decision is deny (denied)\n');
  });

  it('reset covers no filter chain and a failed mTLS handshake; deny covers a TCP connection closed by RBAC', () => {
    const strict = { 'strict.yaml': STRICT_WITH_EXCEPTION };
    expect(expectRun(strict, { port: '8080', tls: 'plaintext' }, 'reset').exitCode).toBe(0);
    expect(expectRun(strict, { port: '8080', tls: 'tls' }, 'reset').exitCode).toBe(0);
    expect(expectRun(strict, { port: '9090', tls: 'plaintext' }, 'allow').exitCode).toBe(0);
    expect(expectRun({ 'deny.yaml': DENY_ADMIN }, { port: '9000' }, 'deny').exitCode).toBe(0);
    expect(expectRun({ 'deny.yaml': DENY_ADMIN }, { port: '9000' }, 'reset').exitCode).toBe(1);
  });

  it('puts the check in the JSON document', () => {
    const result = expectRun({ 'strict.yaml': STRICT_WITH_EXCEPTION }, { port: '8080', tls: 'plaintext' }, 'deny', 'json');
    expect(result.exitCode).toBe(1);
    expect((JSON.parse(result.stdout) as { expectation: unknown }).expectation).toEqual({ expected: 'deny', actual: 'reset', outcome: 'reset', matched: false });
  });

  it('a matching decision on a configuration that failed closed still exits 1, and says why', () => {
    const custom = 'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: ext, namespace: foo}\nspec:\n  action: CUSTOM\n  provider: {name: missing}\n  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]\n';
    const result = expectRun({ 'custom.yaml': custom }, { port: '8080', path: '/admin' }, 'deny');
    expect(result.stdout).toMatch(/^DENIED: /);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('ward-mesh: the decision is deny as expected, but some rules could not be translated faithfully');
  });
});
