// Test helpers (not exported from index.ts): policies from YAML text and a standard workload.
import { isAuthorizationPolicy, isPeerAuthentication, loadResources, type AuthorizationPolicy, type PeerAuthentication } from '@ward/mesh/istio-api';
import { compileWorkload, type WorkloadConfig } from './compile-workload';
import type { CompileInput, MeshSettings, Workload } from './input';

/** The workload of spec §7: namespace foo, app=httpbin, HTTP port 8080 and TCP port 9000. */
export const HTTPBIN: Workload = {
  name: 'httpbin',
  namespace: 'foo',
  labels: { app: 'httpbin', version: 'v1' },
  ports: [
    { port: 8080, protocol: 'HTTP' },
    { port: 9000, protocol: 'TCP' },
  ],
};

/** Loads AuthorizationPolicies and PeerAuthentications from YAML; throws on load errors. */
export function resourcesFromYaml(text: string): { authorizationPolicies: AuthorizationPolicy[]; peerAuthentications: PeerAuthentication[] } {
  const loaded = loadResources(text, { sourceName: 'test.yaml' });
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.code}: ${d.message}`).join('\n'));
  return {
    authorizationPolicies: loaded.resources.filter(isAuthorizationPolicy).map((r) => r.resource),
    peerAuthentications: loaded.resources.filter(isPeerAuthentication).map((r) => r.resource),
  };
}

/** Compiles YAML resources for a workload; throws when no configuration comes out. */
export function compileYaml(text: string, workload: Workload = HTTPBIN, mesh?: Partial<MeshSettings>, extra?: Partial<CompileInput>): WorkloadConfig {
  const result = compileWorkload({ workload, ...(mesh !== undefined ? { mesh } : {}), ...resourcesFromYaml(text), ...(extra ?? {}) });
  if (result.config === undefined) throw new Error(result.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
  return result.config;
}

/** An AuthorizationPolicy document in namespace foo. */
export function policyYaml(name: string, spec: string, extraMetadata = ''): string {
  return `apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: ${name}\n  namespace: foo\n${extraMetadata}spec:\n${spec}\n---\n`;
}
