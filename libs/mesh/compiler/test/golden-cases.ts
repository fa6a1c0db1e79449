// The cases of istiod's authz builder golden tests (builder_test.go): inputs, expected output
// files, the proxy (namespace foo, app=httpbin, version=v1) and the mesh configs per case.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAuthorizationPolicy, loadResources, type AuthorizationPolicy } from '@ward/mesh/istio-api';
import { buildAuthorizationFilters } from '../src/authz/authz-filters';
import type { TrustDomainBundle } from '../src/authz/trust-domain';
import { DEFAULT_MESH_SETTINGS, type ExtensionProvider, type MeshSettings } from '../src/input';
import { toGoYaml } from '../src/yaml/go-yaml';

export const BUILDER_DIR = join(import.meta.dirname, '../testdata/istio/pilot/pkg/security/authz/builder/testdata');
const EXT_AUTHZ_HOST = 'my-custom-ext-authz.foo.svc.cluster.local';

const GRPC_NO_NAMESPACE: ExtensionProvider[] = [
  { name: 'default', envoyExtAuthzGrpc: { service: EXT_AUTHZ_HOST, port: 9000, failOpen: true, statusOnError: '403' } },
];
const GRPC: ExtensionProvider[] = [
  {
    name: 'default',
    envoyExtAuthzGrpc: {
      service: `foo/${EXT_AUTHZ_HOST}`,
      port: 9000,
      timeout: '0.002s',
      failOpen: true,
      statusOnError: '403',
      includeRequestBodyInCheck: { maxRequestBytes: 4096, allowPartialMessage: true },
    },
  },
];
const HTTP: ExtensionProvider[] = [
  {
    name: 'default',
    envoyExtAuthzHttp: {
      service: `foo/${EXT_AUTHZ_HOST}`,
      port: 9000,
      timeout: '10s',
      failOpen: true,
      statusOnError: '403',
      pathPrefix: '/check',
      includeRequestHeadersInCheck: ['x-custom-id', 'x-prefix-*', '*-suffix'],
      includeHeadersInCheck: ['should-not-include-when-IncludeRequestHeadersInCheck-is-set'],
      includeAdditionalHeadersInCheck: { 'x-header-1': 'value-1', 'x-header-2': 'value-2' },
      includeRequestBodyInCheck: { maxRequestBytes: 2048, allowPartialMessage: true, packAsBytes: true },
      headersToUpstreamOnAllow: ['Authorization', 'x-prefix-*', '*-suffix'],
      headersToDownstreamOnDeny: ['Set-cookie', 'x-prefix-*', '*-suffix'],
      headersToDownstreamOnAllow: ['Set-cookie', 'x-prefix-*', '*-suffix'],
    },
  },
];
const INVALID: ExtensionProvider[] = [
  { name: 'default', envoyExtAuthzHttp: { service: 'foo/my-custom-ext-authz', port: 999999, pathPrefix: 'check', statusOnError: '999' } },
];

export interface GoldenCase {
  readonly name: string;
  readonly input: string;
  readonly want: readonly string[];
  readonly providers?: ExtensionProvider[];
  readonly bundle?: TrustDomainBundle;
}

const HTTP_CASES: GoldenCase[] = [
  { name: 'allow-empty-rule', input: 'allow-empty-rule-in.yaml', want: ['allow-empty-rule-out.yaml'] },
  { name: 'allow-full-rule', input: 'allow-full-rule-in.yaml', want: ['allow-full-rule-out.yaml'] },
  { name: 'allow-nil-rule', input: 'allow-nil-rule-in.yaml', want: ['allow-nil-rule-out.yaml'] },
  { name: 'allow-path', input: 'allow-path-in.yaml', want: ['allow-path-out.yaml'] },
  { name: 'audit-full-rule', input: 'audit-full-rule-in.yaml', want: ['audit-full-rule-out.yaml'] },
  { name: 'custom-grpc-provider-no-namespace', input: 'custom-simple-http-in.yaml', want: ['custom-grpc-provider-no-namespace-out1.yaml', 'custom-grpc-provider-no-namespace-out2.yaml'], providers: GRPC_NO_NAMESPACE },
  { name: 'custom-grpc-provider', input: 'custom-simple-http-in.yaml', want: ['custom-grpc-provider-out1.yaml', 'custom-grpc-provider-out2.yaml'], providers: GRPC },
  { name: 'custom-http-provider', input: 'custom-simple-http-in.yaml', want: ['custom-http-provider-out1.yaml', 'custom-http-provider-out2.yaml'], providers: HTTP },
  { name: 'custom-bad-multiple-providers', input: 'custom-bad-multiple-providers-in.yaml', want: ['custom-bad-multiple-providers-out1.yaml', 'custom-bad-multiple-providers-out2.yaml'], providers: HTTP },
  { name: 'custom-bad-invalid-config', input: 'custom-simple-http-in.yaml', want: ['custom-bad-out.yaml'], providers: INVALID },
  { name: 'deny-and-allow', input: 'deny-and-allow-in.yaml', want: ['deny-and-allow-out1.yaml', 'deny-and-allow-out2.yaml'] },
  { name: 'deny-empty-rule', input: 'deny-empty-rule-in.yaml', want: ['deny-empty-rule-out.yaml'] },
  { name: 'dry-run-allow-and-deny', input: 'dry-run-allow-and-deny-in.yaml', want: ['dry-run-allow-and-deny-out1.yaml', 'dry-run-allow-and-deny-out2.yaml'] },
  { name: 'dry-run-allow', input: 'dry-run-allow-in.yaml', want: ['dry-run-allow-out.yaml'] },
  { name: 'dry-run-mix', input: 'dry-run-mix-in.yaml', want: ['dry-run-mix-out.yaml'] },
  { name: 'multiple-policies', input: 'multiple-policies-in.yaml', want: ['multiple-policies-out.yaml'] },
  { name: 'single-policy', input: 'single-policy-in.yaml', want: ['single-policy-out.yaml'] },
  { name: 'trust-domain-one-alias', input: 'simple-policy-td-aliases-in.yaml', want: ['simple-policy-td-aliases-out.yaml'], bundle: ['td1', 'cluster.local'] },
  { name: 'trust-domain-multiple-aliases', input: 'simple-policy-multiple-td-aliases-in.yaml', want: ['simple-policy-multiple-td-aliases-out.yaml'], bundle: ['td1', 'cluster.local', 'some-td'] },
  { name: 'trust-domain-wildcard-in-principal', input: 'simple-policy-principal-with-wildcard-in.yaml', want: ['simple-policy-principal-with-wildcard-out.yaml'], bundle: ['td1', 'foobar'] },
  { name: 'trust-domain-aliases-in-source-principal', input: 'td-aliases-source-principal-in.yaml', want: ['td-aliases-source-principal-out.yaml'], bundle: ['new-td', 'old-td', 'some-trustdomain'] },
  { name: 'trust-domains-field', input: 'trust-domains-in.yaml', want: ['trust-domains-out.yaml'] },
];

const TCP_CASES: GoldenCase[] = [
  { name: 'allow-both-http-tcp', input: 'allow-both-http-tcp-in.yaml', want: ['allow-both-http-tcp-out.yaml'] },
  { name: 'allow-only-http', input: 'allow-only-http-in.yaml', want: ['allow-only-http-out.yaml'] },
  { name: 'audit-both-http-tcp', input: 'audit-both-http-tcp-in.yaml', want: ['audit-both-http-tcp-out.yaml'] },
  { name: 'custom-both-http-tcp', input: 'custom-both-http-tcp-in.yaml', want: ['custom-both-http-tcp-out1.yaml', 'custom-both-http-tcp-out2.yaml'], providers: GRPC },
  { name: 'custom-only-http', input: 'custom-only-http-in.yaml', want: [], providers: HTTP },
  { name: 'deny-both-http-tcp', input: 'deny-both-http-tcp-in.yaml', want: ['deny-both-http-tcp-out.yaml'] },
  { name: 'dry-run-mix', input: 'dry-run-mix-in.yaml', want: ['dry-run-mix-out.yaml'] },
];

/** Loads a golden input file's AuthorizationPolicies with the istio-api loader. */
export function loadGoldenPolicies(path: string): AuthorizationPolicy[] {
  const loaded = loadResources(readFileSync(path, 'utf8'), { sourceName: path });
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`${path}: ${errors.map((d) => d.message).join('; ')}`);
  return loaded.resources.filter(isAuthorizationPolicy).map((r) => r.resource);
}

/** Builds the filters of a golden case the way istiod's builder test does. */
export function buildGoldenCase(testCase: GoldenCase, dir: 'http' | 'tcp'): string[] {
  const mesh: MeshSettings = { ...DEFAULT_MESH_SETTINGS, extensionProviders: testCase.providers ?? [] };
  const built = buildAuthorizationFilters(
    {
      workload: { namespace: 'foo', labels: { app: 'httpbin', version: 'v1' }, ports: [] },
      mesh,
      policies: loadGoldenPolicies(join(BUILDER_DIR, dir, testCase.input)),
      services: [{ hostname: EXT_AUTHZ_HOST, namespace: 'foo' }],
      bundle: testCase.bundle ?? ['cluster.local'],
      useFilterState: false,
      untranslatable: 'istiod',
      defaultNamespace: 'default',
      scope: testCase.providers === undefined ? 'local' : 'custom',
    },
    [],
  );
  return (dir === 'http' ? built.http : built.tcp).map((filter) => toGoYaml(filter));
}

export const GOLDEN_CASES = { http: HTTP_CASES, tcp: TCP_CASES };

