/** Which `apiVersion`/`kind` pairs the loader decodes, skips or rejects. */
import { SECURITY_API_VERSIONS } from '../model/authorization-policy';
import type { SecurityApiVersion } from '../model/authorization-policy';

/** What to do with a document of a given type. */
export type KindDecision =
  | { readonly action: 'security'; readonly kind: 'AuthorizationPolicy' | 'PeerAuthentication'; readonly apiVersion: SecurityApiVersion }
  | { readonly action: 'inventory'; readonly kind: 'Namespace' | 'Pod' }
  | { readonly action: 'list' }
  | { readonly action: 'ignore' }
  | { readonly action: 'reject'; readonly message: string };

/**
 * API groups of Kubernetes and Istio whose other kinds commonly sit next to policies in the same
 * files; they are skipped with a note. A kind outside these groups is rejected.
 */
const SKIPPED_GROUPS = new Set([
  '', 'apps', 'batch', 'policy', 'autoscaling', 'networking.k8s.io', 'rbac.authorization.k8s.io',
  'gateway.networking.k8s.io', 'networking.istio.io', 'telemetry.istio.io', 'extensions.istio.io',
  'install.istio.io', 'apiextensions.k8s.io',
]);

const SECURITY_KINDS = ['AuthorizationPolicy', 'PeerAuthentication'] as const;

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

function decideSecurity(apiVersion: string, kind: 'AuthorizationPolicy' | 'PeerAuthentication'): KindDecision {
  const version = SECURITY_API_VERSIONS.find((candidate) => candidate === apiVersion);
  if (version !== undefined) return { action: 'security', kind, apiVersion: version };
  return { action: 'reject', message: `${kind} must have apiVersion ${SECURITY_API_VERSIONS.join(' or ')}, found ${JSON.stringify(apiVersion)}` };
}

/** Decides how to treat a document with `apiVersion` and `kind`. */
export function decideKind(apiVersion: string, kind: string): KindDecision {
  const securityKind = SECURITY_KINDS.find((candidate) => candidate === kind);
  if (securityKind !== undefined) return decideSecurity(apiVersion, securityKind);
  if (apiVersion === 'v1' && (kind === 'Namespace' || kind === 'Pod')) return { action: 'inventory', kind };
  if (apiVersion === 'v1' && kind === 'List') return { action: 'list' };
  const group = groupOf(apiVersion);
  if (group === 'security.istio.io') {
    if (kind === 'RequestAuthentication') return { action: 'ignore' };
    return { action: 'reject', message: `unknown kind ${JSON.stringify(kind)} in security.istio.io; expected AuthorizationPolicy or PeerAuthentication` };
  }
  if (SKIPPED_GROUPS.has(group)) return { action: 'ignore' };
  return { action: 'reject', message: `unsupported kind ${JSON.stringify(kind)} of apiVersion ${JSON.stringify(apiVersion)}` };
}
