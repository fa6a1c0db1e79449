import { describe, expect, it } from 'vitest';
import { compileOptionsFromFlags, runCompile } from './compile-command';
import type { CompileCommandOptions } from './compile-command';

const DENY_ADMIN = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: foo}
spec:
  action: DENY
  rules:
  - to:
    - operation:
        paths: ["/admin*"]
`;
const ALLOW_HEALTH = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: allow-health, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  rules:
  - to:
    - operation: {paths: ["/healthz"]}
`;
const STRICT = `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: foo}
spec:
  mtls: {mode: STRICT}
`;

function options(flags: Record<string, string> = {}, output: 'yaml' | 'json' = 'json'): CompileCommandOptions {
  const built = compileOptionsFromFlags({ namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin' } }, { ports: '8080/HTTP,9000/TCP', ...flags }, output, 'default');
  if (typeof built === 'string') throw new Error(built);
  return built;
}

function compile(files: Record<string, string>, flags: Record<string, string> = {}) {
  const sources = Object.entries(files).map(([sourceName, text]) => ({ sourceName, text }));
  const result = runCompile(sources, [], options(flags));
  return { ...result, json: result.stdout === '' ? undefined : (JSON.parse(result.stdout) as Record<string, unknown>) };
}

interface Filter {
  readonly name: string;
  readonly typedConfig: { readonly rules?: { readonly action?: string; readonly policies: Record<string, unknown> } };
}

describe('ward-mesh compile', () => {
  it('emits DENY before ALLOW, and no ALLOW filter when there is no ALLOW policy', () => {
    const denyOnly = compile({ 'deny.yaml': DENY_ADMIN });
    expect(denyOnly.exitCode).toBe(0);
    const denyFilters = denyOnly.json?.['httpFilters'] as Filter[];
    expect(denyFilters.map((f) => f.typedConfig.rules?.action ?? 'ALLOW')).toEqual(['DENY']);
    const both = compile({ 'deny.yaml': DENY_ADMIN, 'allow.yaml': ALLOW_HEALTH });
    const filters = both.json?.['httpFilters'] as Filter[];
    expect(filters.map((f) => [f.name, f.typedConfig.rules?.action ?? 'ALLOW', Object.keys(f.typedConfig.rules?.policies ?? {})])).toEqual([
      ['envoy.filters.http.rbac', 'DENY', ['ns[foo]-policy[deny-admin]-rule[0]']],
      ['envoy.filters.http.rbac', 'ALLOW', ['ns[foo]-policy[allow-health]-rule[0]']],
    ]);
  });

  it('turns a path-only DENY into a match-all TCP rule and says where', () => {
    const result = compile({ 'deny.yaml': DENY_ADMIN });
    const tcp = result.json?.['networkFilters'] as Filter[];
    expect(tcp[0]?.typedConfig.rules?.policies['ns[foo]-policy[deny-admin]-rule[0]']).toEqual({
      permissions: [{ andRules: { rules: [{ any: true }] } }],
      principals: [{ andIds: { ids: [{ any: true }] } }],
    });
    expect(result.stderr).toContain('deny.yaml:7: warning [AP_DENY_HTTP_ONLY] AuthorizationPolicy foo/deny-admin: configured AuthorizationPolicy will deny all traffic');
    expect(result.stderr).toMatch(/deny\.yaml:9: warning \[COMPILE_TCP_RULE_WIDENED\] .*\(spec\.rules\[0\]\.to\[0\]\.operation\.paths\[0\]\)/);
  });

  it('applies PeerAuthentication to the inbound listener', () => {
    const result = compile({ 'pa.yaml': STRICT });
    expect(result.json?.['mtls']).toMatchObject({ mode: 'STRICT', namespacePolicy: { name: 'strict' } });
    expect((result.json?.['listener'] as { name: string }).name).toBe('virtualInbound');
  });

  it('does not compile invalid inputs and exits 1 with located errors', () => {
    const result = compile({ 'bad.yaml': DENY_ADMIN.replace('paths: ["/admin*"]', 'paths: [""]') });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('bad.yaml:9: error [AP_EMPTY_VALUE] AuthorizationPolicy foo/deny-admin: invalid policy deny-admin.foo: empty value not allowed, found in Paths');
    expect(result.stderr.endsWith('ward-mesh: not compiled: the inputs have errors\n')).toBe(true);
  });

  it('writes istiod\'s golden YAML format with -o yaml', () => {
    const result = runCompile([{ sourceName: 'deny.yaml', text: DENY_ADMIN }], [], options({}, 'yaml'));
    expect(result.stdout).toContain("    '@type': type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC\n");
    expect(result.stdout).toContain('                        prefix: /admin\n');
  });

  it('refuses malformed workload flags', () => {
    expect(compileOptionsFromFlags({ namespace: 'foo', name: 'a', labels: {} }, { ports: '99999/HTTP' }, 'json', 'default')).toMatch(/port in 1..65535/);
    expect(compileOptionsFromFlags({ namespace: 'foo', name: 'a', labels: {} }, { ports: '80/SCTP' }, 'json', 'default')).toMatch(/unknown protocol "SCTP"/);
    expect(compileOptionsFromFlags({ namespace: 'foo', name: 'a', labels: {} }, { 'trust-domain': 'a/b' }, 'json', 'default')).toMatch(/--trust-domain/);
  });

  it('uses the mesh trust domain and aliases for principals', () => {
    const policy = ALLOW_HEALTH.replace('  - to:\n    - operation: {paths: ["/healthz"]}', '  - from:\n    - source: {principals: ["cluster.local/ns/a/sa/b"]}');
    const result = compile({ 'p.yaml': policy }, { 'trust-domain': 'td1', 'trust-domain-aliases': 'cluster.local' });
    expect(JSON.stringify(result.json?.['httpFilters'])).toContain('"exact":"spiffe://td1/ns/a/sa/b"');
    expect(JSON.stringify(result.json?.['httpFilters'])).toContain('"exact":"spiffe://cluster.local/ns/a/sa/b"');
  });
});
