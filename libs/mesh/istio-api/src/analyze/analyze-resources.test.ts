import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeResources, istioctlAnalyzeLine, loadResources } from '../index';

const TESTDATA = join(__dirname, '..', '..', 'testdata', 'analyzers', 'authorizationpolicies.yaml');

function analyze(text: string) {
  const loaded = loadResources(text, { sourceName: 'a.yaml' });
  expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return analyzeResources(loaded.resources);
}

describe("Istio's authorizationpolicies analyzer case", () => {
  const messages = analyze(readFileSync(TESTDATA, 'utf8'));

  it('reports exactly the messages Istio expects', () => {
    const summary = messages.map((m) => `${m.code} ${m.resource?.namespace}/${m.resource?.name}`).sort();
    expect(summary).toEqual(
      [
        'IST0101 httpbin/httpbin-bogus-ns',
        'IST0101 httpbin/httpbin-bogus-ns',
        'IST0101 httpbin/httpbin-bogus-not-ns',
        'IST0101 httpbin/httpbin-bogus-not-ns',
        'IST0127 httpbin-empty/httpbin-empty-namespace-wide',
        'IST0127 httpbin/httpbin-nopods',
        'IST0127 istio-system/meshwide-httpbin-v1',
        'IST0127 test-ambient/no-workload',
      ].sort(),
    );
  });

  it('words and locates them like istioctl, pointing IST0101 at the namespace value', () => {
    const lines = messages.map(istioctlAnalyzeLine);
    expect(lines).toContain('Warning [IST0127] (AuthorizationPolicy httpbin/httpbin-nopods a.yaml:155) No matching workloads for this resource with the following labels: app=bogus-label,version=v1');
    expect(lines).toContain('Warning [IST0127] (AuthorizationPolicy httpbin-empty/httpbin-empty-namespace-wide a.yaml:109) No matching workloads for this resource with the following labels: ');
    const bogus = messages.filter((m) => m.code === 'IST0101' && m.resource?.name === 'httpbin-bogus-ns');
    expect(bogus.map((m) => [m.severity, m.message, m.path, m.position?.line])).toEqual([
      ['error', 'Referenced namespace not found: "*-bogus"', 'spec.rules[0].from[1].source.namespaces[2]', 249],
      ['error', 'Referenced namespace not found: "bogus-*"', 'spec.rules[0].from[1].source.namespaces[3]', 250],
    ]);
  });
});

describe('schema messages in analyze', () => {
  it('wraps webhook errors as IST0106 and warnings as IST0133, without metadata checks', () => {
    const messages = analyze(`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: d
  annotations: {"istio.io/dry-run": "maybe"}
spec:
  action: DENY
  selector: {}
`);
    expect(messages.map(istioctlAnalyzeLine)).toEqual([
      'Warning [IST0133] (AuthorizationPolicy default/d a.yaml:8) Schema validation warning: workload selector specified without labels',
      'Error [IST0106] (AuthorizationPolicy default/d a.yaml:7) Schema validation error: invalid policy d.default: DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request',
      'Warning [IST0127] (AuthorizationPolicy default/d a.yaml:1) No matching workloads for this resource with the following labels: ',
    ]);
  });

  it('counts pods by sidecar container, inject label and annotation, namespace label and ambient mode', () => {
    const pod = (name: string, extra: string) => `---
apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: shop
  labels: {app: ${name}}${extra}
`;
    const policy = (app: string) => `---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ${app}, namespace: shop}
spec:
  selector: {matchLabels: {app: ${app}}}
`;
    const text = [
      pod('proxy', '\nspec: {containers: [{name: istio-proxy, image: proxyv2}]}'),
      pod('labelled', '\n  annotations: {sidecar.istio.io/inject: "true"}'),
      pod('optout', '\n  annotations: {sidecar.istio.io/inject: "false"}'),
      pod('ambient', '\n  annotations: {ambient.istio.io/redirection: enabled}'),
      pod('plain', ''),
      ...['proxy', 'labelled', 'optout', 'ambient', 'plain'].map(policy),
    ].join('');
    const unmatched = analyze(text).filter((m) => m.code === 'IST0127').map((m) => m.resource?.name);
    expect(unmatched).toEqual(['optout', 'plain']);
  });
});
