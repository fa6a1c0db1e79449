import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { authorizationPolicyArbitrary } from '../test/policy-arbitraries';
import { PolicyTranslationCache } from './authz/rule-set';
import { compileWorkload } from './compile-workload';
import { simulate } from './simulate/simulate';
import { HTTPBIN, policyYaml, resourcesFromYaml } from './testing';

function compile(yaml: string, untranslatableRules: 'fail-closed' | 'istiod' = 'fail-closed'): ReturnType<typeof compileWorkload> {
  return compileWorkload({ workload: HTTPBIN, ...resourcesFromYaml(yaml), options: { untranslatableRules } });
}

const UNKNOWN_WHEN = policyYaml('deny-odd', '  action: DENY\n  rules:\n  - when:\n    - key: destination.labels[app]\n      values: ["x"]\n  - to:\n    - operation:\n        paths: ["/admin"]');

describe('compileWorkload results', () => {
  it('is ok with a faithful translation and lists the applied policies', () => {
    const result = compile(policyYaml('a', '  rules:\n  - {}') + policyYaml('d', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        ports: ["1"]', '  annotations:\n    istio.io/dry-run: "true"\n'));
    expect(result.ok).toBe(true);
    expect(result.config?.policies).toEqual({ allow: [{ namespace: 'foo', name: 'a', dryRun: false }], deny: [{ namespace: 'foo', name: 'd', dryRun: true }], audit: [], custom: [] });
  });

  it('refuses unusable input without producing config', () => {
    const result = compileWorkload({ workload: { namespace: '', labels: {}, ports: [{ port: 0, protocol: 'HTTP' }] } });
    expect(result.ok).toBe(false);
    expect(result.config).toBeUndefined();
    expect(result.diagnostics.map((d) => d.path)).toEqual(['workload.namespace', 'workload.ports[0].port']);
  });

  it('refuses structurally wrong input instead of crashing', () => {
    const broken = compileWorkload({ workload: { namespace: 'foo', labels: null, ports: 'x' } as never });
    expect(broken.ok).toBe(false);
    expect(broken.diagnostics.map((d) => d.path)).toEqual(['workload.labels', 'workload.ports']);
  });

  it('fails closed on a DENY rule istiod would skip: the rule denies everything', () => {
    const result = compile(UNKNOWN_WHEN);
    expect(result.ok).toBe(false);
    expect(result.diagnostics.filter((d) => d.code === 'COMPILE_UNKNOWN_ATTRIBUTE')).toEqual([
      expect.objectContaining({ severity: 'error', path: 'spec.rules[0].when[0].key', resource: { kind: 'AuthorizationPolicy', namespace: 'foo', name: 'deny-odd' } }),
    ]);
    const config = result.config;
    if (config === undefined) throw new Error('a fail-closed config is produced');
    expect(simulate(config, { port: 8080, transport: 'mtls', http: { method: 'GET', path: '/ok', host: 'h' } })).toMatchObject({ outcome: 'denied', decision: { policy: 'ns[foo]-policy[deny-odd]-rule[0]' } });
  });

  it('reproduces istiod in istiod mode: the rule is skipped and the DENY narrows', () => {
    const config = compile(UNKNOWN_WHEN, 'istiod').config;
    if (config === undefined) throw new Error('config');
    expect(simulate(config, { port: 8080, transport: 'mtls', http: { method: 'GET', path: '/ok', host: 'h' } }).outcome).toBe('allowed');
    expect(simulate(config, { port: 8080, transport: 'mtls', http: { method: 'GET', path: '/admin', host: 'h' } }).outcome).toBe('denied');
  });

  it('reports HTTP-only rules on TCP: dropped for ALLOW, widened for DENY', () => {
    const allow = compile(policyYaml('a', '  rules:\n  - to:\n    - operation:\n        methods: ["GET"]'));
    expect(allow.diagnostics.map((d) => [d.code, d.path])).toEqual([['COMPILE_TCP_RULE_DROPPED', 'spec.rules[0].to[0].operation.methods[0]']]);
    const deny = compile(policyYaml('d', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        methods: ["GET"]\n        paths: ["/x"]'));
    expect(deny.diagnostics).toEqual([expect.objectContaining({ code: 'COMPILE_TCP_RULE_WIDENED', path: 'spec.rules[0].to[0].operation.methods[0]', message: 'DENY rule widened on the TCP filter: HTTP-only to[0].operation.methods, to[0].operation.paths ignored' })]);
    expect(deny.ok).toBe(true);
  });

  it('reports invalid values as errors while keeping istiod semantics', () => {
    const result = compile(policyYaml('a', '  rules:\n  - from:\n    - source:\n        ipBlocks: ["10.0.0.300"]'));
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => [d.code, d.path])).toContainEqual(['COMPILE_INVALID_VALUE', 'spec.rules[0].from[0].source.ipBlocks[0]']);
    expect(Object.keys((result.config?.httpFilters[0]?.typedConfig as unknown as { rules: { policies?: object } }).rules.policies ?? {})).toEqual([]);
  });

  it('ignores targetRef policies and reports an invalid dry-run value', () => {
    const targeted = policyYaml('t', '  targetRefs:\n  - kind: Gateway\n    group: gateway.networking.k8s.io\n    name: gw\n  rules:\n  - {}');
    const badDryRun = policyYaml('b', '  rules:\n  - {}', '  annotations:\n    istio.io/dry-run: "yes"\n');
    const result = compile(targeted + badDryRun);
    expect(result.diagnostics.map((d) => d.code).sort()).toEqual(['COMPILE_DRY_RUN_INVALID', 'COMPILE_TARGET_REF_IGNORED']);
    expect(result.config?.policies.allow).toEqual([{ namespace: 'foo', name: 'b', dryRun: false }]);
  });

  it('selects root-namespace policies for every workload and nothing from other namespaces', () => {
    const root = policyYaml('mesh', '  rules:\n  - {}').replace('namespace: foo', 'namespace: istio-system');
    const other = policyYaml('other', '  rules:\n  - {}').replace('namespace: foo', 'namespace: bar');
    expect(compile(root + other).config?.policies.allow).toEqual([{ namespace: 'istio-system', name: 'mesh', dryRun: false }]);
  });

  it('gives identical output with a shared PolicyTranslationCache', () => {
    fc.assert(
      fc.property(fc.array(authorizationPolicyArbitrary(), { maxLength: 4 }), (policies) => {
        const cache = new PolicyTranslationCache();
        const plain = compileWorkload({ workload: HTTPBIN, authorizationPolicies: policies });
        compileWorkload({ workload: { ...HTTPBIN, name: 'other' }, authorizationPolicies: policies, cache });
        const cached = compileWorkload({ workload: HTTPBIN, authorizationPolicies: policies, cache });
        expect(JSON.stringify(cached.config?.listener)).toBe(JSON.stringify(plain.config?.listener));
        expect(cached.diagnostics).toEqual(plain.diagnostics);
      }),
      { numRuns: 40, seed: 3 },
    );
  });
});
