import { describe, expect, it } from 'vitest';
import { explainSimulation, explainWorkload } from './explain';
import { simulate } from './simulate/simulate';
import { compileYaml, policyYaml } from './testing';

const codes = (yaml: string): string[] => explainWorkload(compileYaml(yaml)).findings.map((f) => f.code);

describe('explainWorkload', () => {
  it('says nothing alarming without policies (PERMISSIVE)', () => {
    expect(codes('')).toEqual([]);
    expect(explainWorkload(compileYaml('')).lines).toContain('HTTP authorization filters: none (everything is allowed)');
  });
  it('warns that one ALLOW denies everything else', () => {
    expect(codes(policyYaml('a', '  rules:\n  - to:\n    - operation:\n        paths: ["/api"]'))).toEqual(['ALLOW_DENIES_UNMATCHED', 'TCP_ALLOW_EMPTY']);
  });
  it('recognises allow-nothing and allow-everything', () => {
    expect(codes(policyYaml('a', '  {}'))).toEqual(['ALLOW_NOTHING']);
    expect(codes(policyYaml('a', '  rules:\n  - {}'))).toEqual([]);
  });
  it('warns that a path-only DENY closes every TCP connection', () => {
    const findings = explainWorkload(compileYaml(policyYaml('d', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["/admin"]'))).findings;
    expect(findings.map((f) => f.code)).toEqual(['TCP_DENY_MATCHES_ALL']);
    expect(findings[0]?.message).toContain('ns[foo]-policy[d]-rule[0]');
  });
  it('names the dry-run stats', () => {
    const yaml = policyYaml('d', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        ports: ["1"]', '  annotations:\n    istio.io/dry-run: "true"\n');
    expect(explainWorkload(compileYaml(yaml)).findings.find((f) => f.code === 'DRY_RUN')?.message).toContain('istio_dry_run_deny_shadow_denied');
  });
  it('explains STRICT resets', () => {
    const strict = 'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: d\n  namespace: istio-system\nspec:\n  mtls:\n    mode: STRICT\n';
    expect(codes(strict)).toEqual(['STRICT_RESETS_PLAINTEXT']);
  });
});

describe('explainSimulation', () => {
  it('walks through the chain, filters, decision and stats', () => {
    const config = compileYaml(policyYaml('a', '  rules:\n  - to:\n    - operation:\n        paths: ["/api"]'));
    const lines = explainSimulation(simulate(config, { port: 8080, transport: 'mtls', http: { method: 'GET', path: '/x', host: 'h' } })).lines;
    expect(lines[0]).toBe('outcome: denied');
    expect(lines.some((l) => l.startsWith('filter chain') && l.includes('0.0.0.0_8080'))).toBe(true);
    expect(lines).toContain('response: 403 "RBAC: access denied" (rbac_access_denied_matched_policy[none])');
    expect(lines.at(-1)).toContain('http.inbound_0.0.0.0_8080;.rbac.denied');
  });
});
