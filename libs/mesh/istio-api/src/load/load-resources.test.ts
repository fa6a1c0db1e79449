import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAuthorizationPolicy, isPeerAuthentication, loadResources } from '../index';
import type { AuthorizationPolicy, Diagnostic, PeerAuthentication } from '../index';

const TESTDATA = join(__dirname, '..', '..', 'testdata');

function load(text: string, limits?: Parameters<typeof loadResources>[1]['limits']) {
  return loadResources(text, { sourceName: 'input.yaml', ...(limits === undefined ? {} : { limits }) });
}

function onlyPolicy(text: string): AuthorizationPolicy {
  const result = load(text);
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const policies = result.resources.filter(isAuthorizationPolicy);
  expect(policies).toHaveLength(1);
  return (policies[0] as { resource: AuthorizationPolicy }).resource;
}

function errorsOf(text: string): Diagnostic[] {
  return load(text).diagnostics.filter((d) => d.severity === 'error');
}

const AP = (spec: string, extra = '') => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: p
  namespace: foo${extra}
spec:
${spec}`;

describe('loading the Istio builder inputs', () => {
  const files = readdirSync(join(TESTDATA, 'builder-inputs'));
  it.each(files)('%s loads without errors', (file) => {
    const text = readFileSync(join(TESTDATA, 'builder-inputs', file), 'utf8');
    const result = loadResources(text, { sourceName: file });
    expect(result.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const documentCount = text.split(/^---$/m).filter((part) => /kind:/.test(part)).length;
    expect(result.resources).toHaveLength(documentCount);
  });
});

describe('jsonpb decoding semantics', () => {
  it('defaults action to ALLOW and reads every source/operation/condition field', () => {
    const policy = onlyPolicy(AP(`  rules:
  - from:
    - source:
        principals: [a]
        notRequestPrincipals: [b]
        serviceAccounts: [ns/sa]
        notTrustDomains: [td]
    to:
    - operation: {ports: ["80"], notPaths: ["/x"]}
    when:
    - key: request.headers[x]
      notValues: [v]`));
    expect(policy.spec.action).toBe('ALLOW');
    const rule = policy.spec.rules?.[0];
    expect(rule?.from?.[0]?.source).toEqual({ principals: ['a'], notRequestPrincipals: ['b'], serviceAccounts: ['ns/sa'], notTrustDomains: ['td'] });
    expect(rule?.to?.[0]?.operation).toEqual({ ports: ['80'], notPaths: ['/x'] });
    expect(rule?.when?.[0]).toEqual({ key: 'request.headers[x]', notValues: ['v'] });
  });

  it('accepts proto (snake_case) field names like jsonpb', () => {
    const policy = onlyPolicy(AP(`  rules:
  - from:
    - source: {not_principals: [a], ip_blocks: ["1.2.3.4"]}
    when:
    - {key: source.ip, not_values: ["1.1.1.1"]}`));
    expect(policy.spec.rules?.[0]?.from?.[0]?.source).toEqual({ notPrincipals: ['a'], ipBlocks: ['1.2.3.4'] });
    expect(policy.spec.rules?.[0]?.when?.[0]?.notValues).toEqual(['1.1.1.1']);
  });

  it('treats empty and null lists as absent, and a null rule as the empty rule', () => {
    expect(onlyPolicy(AP('  rules: []')).spec.rules).toBeUndefined();
    expect(onlyPolicy(AP('  rules:')).spec.rules).toBeUndefined();
    const result = load(AP('  rules: [null]'));
    const policy = result.resources.filter(isAuthorizationPolicy)[0]?.resource;
    expect(policy?.spec.rules).toEqual([{}]);
    expect(result.diagnostics.map((d) => d.code)).toEqual(['ADVICE_NULL_LIST_ELEMENT']);
    expect(result.diagnostics[0]?.path).toBe('spec.rules[0]');
  });

  it('keeps present-but-empty messages and maps', () => {
    const policy = onlyPolicy(AP(`  selector: {}
  rules:
  - from:
    - source: {}`));
    expect(policy.spec.selector).toEqual({ matchLabels: {} });
    expect(policy.spec.rules?.[0]?.from?.[0]?.source).toEqual({});
    const peer = load(`apiVersion: security.istio.io/v1beta1
kind: PeerAuthentication
metadata: {name: pa}
spec:
  mtls: {}
  portLevelMtls: {}`).resources.filter(isPeerAuthentication)[0]?.resource as PeerAuthentication;
    expect(peer.apiVersion).toBe('security.istio.io/v1beta1');
    expect(peer.spec.mtls).toEqual({ mode: 'UNSET' });
    expect(peer.spec.portLevelMtls).toEqual({});
  });

  it('decodes enums by name or number and port-level keys as ports', () => {
    expect(onlyPolicy(AP('  action: 1')).spec.action).toBe('DENY');
    const peer = load(`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: pa, namespace: foo}
spec:
  selector: {matchLabels: {app: a}}
  portLevelMtls:
    9000: {mode: DISABLE}
    "8080": {mode: STRICT}`).resources[0]?.resource as PeerAuthentication;
    expect(peer.spec.portLevelMtls).toEqual({ '8080': { mode: 'STRICT' }, '9000': { mode: 'DISABLE' } });
  });

  it('reads metadata, including annotations and a YAML timestamp as text', () => {
    const policy = onlyPolicy(AP('  {}', `
  labels: {team: a}
  annotations: {"istio.io/dry-run": "true"}
  creationTimestamp: 2024-01-02T03:04:05Z`));
    expect(policy.metadata).toEqual({
      name: 'p',
      namespace: 'foo',
      labels: { team: 'a' },
      annotations: { 'istio.io/dry-run': 'true' },
      creationTimestamp: '2024-01-02T03:04:05Z',
    });
  });
});

describe('field positions', () => {
  it('maps every field path to its line', () => {
    const result = load(AP(`  rules:
  - from:
    - source:
        principals:
        - a
        - b`));
    const loaded = result.resources[0];
    expect(loaded?.origin).toEqual({ sourceName: 'input.yaml', documentIndex: 0, position: { line: 1, column: 1 } });
    expect(loaded?.positions.get('metadata.name')).toEqual({ line: 4, column: 9 });
    expect(loaded?.positions.get('spec.rules[0].from[0].source.principals[1]')?.line).toBe(12);
  });

  it('numbers documents and keeps absolute lines in later documents', () => {
    const result = load(`${AP('  {}')}\n---\n# second\n${AP('  action: DENY\n  rules: [{}]')}`);
    expect(result.resources.map((r) => [r.origin.documentIndex, r.origin.position.line])).toEqual([[0, 1], [1, 10]]);
    expect(result.resources[1]?.positions.get('spec.action')?.line).toBe(16);
  });
});

describe('bad input gives a located diagnostic, never an exception', () => {
  const cases: [string, string, string, number, string?][] = [
    ['invalid YAML', 'a: [1, 2\nb: c', 'MESH_YAML_SYNTAX', 2],
    ['duplicate keys', 'apiVersion: v1\napiVersion: v1', 'MESH_YAML_SYNTAX', 2],
    ['not an object', '- a\n- b', 'MESH_NOT_AN_OBJECT', 1],
    ['missing kind', 'apiVersion: security.istio.io/v1\nmetadata: {name: x}', 'MESH_MISSING_TYPE', 1, 'kind'],
    ['misspelled kind', 'apiVersion: security.istio.io/v1\nkind: AuthorisationPolicy', 'MESH_UNSUPPORTED_KIND', 2, 'kind'],
    ['unknown group', 'apiVersion: example.com/v1\nkind: Widget', 'MESH_UNSUPPORTED_KIND', 2, 'kind'],
    ['wrong apiVersion', 'apiVersion: security.istio.io/v1alpha1\nkind: AuthorizationPolicy', 'MESH_WRONG_API_VERSION', 2, 'kind'],
    ['unknown spec field', AP('  rules:\n  - from:\n    - source: {principal: [a]}'), 'MESH_UNKNOWN_FIELD', 9, 'spec.rules[0].from[0].source.principal'],
    ['unknown top-level field', `${AP('  {}')}\nextra: 1`, 'MESH_UNKNOWN_FIELD', 8, 'extra'],
    ['number where a string is needed', AP('  rules:\n  - to:\n    - operation: {ports: [80]}'), 'MESH_WRONG_TYPE', 9, 'spec.rules[0].to[0].operation.ports[0]'],
    ['scalar where a list is needed', AP('  rules: yes'), 'MESH_WRONG_TYPE', 7, 'spec.rules'],
    ['unknown enum value', AP('  action: REJECT'), 'MESH_UNKNOWN_ENUM_VALUE', 7, 'spec.action'],
    ['merge keys', 'base: &b {a: 1}\nother:\n  <<: *b', 'MESH_YAML_UNSUPPORTED', 3],
  ];
  it.each(cases)('%s', (_name, text, code, line, path) => {
    const errors = errorsOf(text);
    expect(errors.map((e) => e.code)).toContain(code);
    const error = errors.find((e) => e.code === code);
    expect(error?.position?.line).toBe(line);
    if (path !== undefined) expect(error?.path).toBe(path);
    expect(error?.sourceName).toBe('input.yaml');
  });

  it('names the unknown field and its message type like istioctl', () => {
    const [error] = errorsOf(AP('  rules:\n  - from:\n    - source: {principal: [a]}'));
    expect(error?.message).toBe('unknown field "principal" in istio.security.v1beta1.Source');
    expect(error?.resource).toEqual({ kind: 'AuthorizationPolicy', namespace: 'foo', name: 'p' });
  });

  it('never returns a policy that had a decoding error (fail closed)', () => {
    const result = load(AP('  action: DENY\n  rules:\n  - to:\n    - operation: {ports: [80], methods: [GET]}'));
    expect(result.resources).toEqual([]);
    expect(hasError(result.diagnostics)).toBe(true);
  });

  it('rejects a 10 MB input before parsing it', () => {
    const huge = AP(`  rules:\n  - from:\n    - source:\n        principals: ["${'a'.repeat(10 * 1024 * 1024)}"]`);
    const started = performance.now();
    const errors = errorsOf(huge);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(errors.map((e) => e.code)).toEqual(['MESH_INPUT_TOO_LARGE']);
    expect(errors[0]?.position).toEqual({ line: 1, column: 1 });
  });

  it('rejects one oversized document and keeps the others', () => {
    const big = AP(`  rules:\n  - from:\n    - source:\n        principals: ["${'a'.repeat(2 * 1024 * 1024)}"]`);
    const result = load(`${AP('  {}')}\n---\n${big}`);
    expect(result.resources).toHaveLength(1);
    expect(result.diagnostics.map((d) => [d.code, d.position?.line])).toEqual([['MESH_DOCUMENT_TOO_LARGE', 9]]);
  });

  it('rejects deep flow nesting without overflowing the stack', () => {
    const depth = 200_000;
    const errors = errorsOf(`a: ${'['.repeat(depth)}${']'.repeat(depth)}`);
    expect(errors.map((e) => e.code)).toEqual(['MESH_NESTING_TOO_DEEP']);
  });

  it('rejects deep block nesting', () => {
    const lines = Array.from({ length: 100 }, (_, level) => `${' '.repeat(level)}k${level}:`);
    expect(errorsOf(lines.join('\n')).map((e) => e.code)).toEqual(['MESH_NESTING_TOO_DEEP']);
  });

  it('rejects an alias expansion bomb', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 10; level++) {
      const refs = Array.from({ length: 10 }, () => `*a${level - 1}`).join(', ');
      levels.push(`a${level}: &a${level} [${refs}]`);
    }
    const started = performance.now();
    const errors = errorsOf(levels.join('\n'));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(errors.map((e) => e.code)).toEqual(['MESH_TOO_MANY_NODES']);
  });

  it('rejects a self-referencing alias', () => {
    expect(errorsOf('a: &x [*x]').map((e) => e.code)).toEqual(
      expect.arrayContaining([expect.stringMatching(/MESH_(NESTING_TOO_DEEP|YAML_SYNTAX)/)]),
    );
  });

  it('caps the number of documents', () => {
    const text = Array.from({ length: 5 }, () => AP('  {}')).join('\n---\n');
    const result = load(text, { maxDocuments: 3 });
    expect(result.resources).toHaveLength(3);
    expect(result.diagnostics.map((d) => d.code)).toEqual(['MESH_TOO_MANY_DOCUMENTS']);
  });

  it('rejects bad limit overrides as caller misuse', () => {
    expect(() => load('a: 1', { maxDocuments: 0 })).toThrow(TypeError);
  });
});

describe('other kinds', () => {
  it('skips Kubernetes kinds with a note and reads Namespace and Pod as inventory', () => {
    const text = readFileSync(join(TESTDATA, 'analyzers', 'authorizationpolicies.yaml'), 'utf8');
    const result = loadResources(text, { sourceName: 'a.yaml' });
    expect(result.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const kinds = result.resources.map((r) => r.resource.kind);
    expect(kinds.filter((k) => k === 'AuthorizationPolicy')).toHaveLength(10);
    expect(kinds.filter((k) => k === 'Namespace')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'Pod')).toHaveLength(2);
    expect(result.diagnostics.map((d) => d.code)).toEqual(['MESH_IGNORED_KIND', 'MESH_IGNORED_KIND', 'MESH_IGNORED_KIND']);
  });

  it('loads the items of a v1 List', () => {
    const result = load(`apiVersion: v1
kind: List
items:
- ${AP('  {}').split('\n').join('\n  ')}`);
    expect(result.resources.map((r) => [r.resource.kind, r.origin.position.line])).toEqual([['AuthorizationPolicy', 4]]);
  });
});

function hasError(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
