/**
 * Validation entry points: istiod's webhook checks (what `istioctl validate` reports), the CRD
 * schema checks and, on request, ward's advice — as located diagnostics.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { LoadedResource, SecurityResource } from '../model/resources';
import { adviseResource } from './advice';
import { validateAuthorizationPolicy } from './authorization-policy';
import { checkCrdSchema } from './crd-schema';
import { Findings } from './findings';
import { validateMetadata } from './metadata';
import { validatePeerAuthentication } from './peer-authentication';

export interface ValidateOptions {
  /** Namespace assumed for resources that have none (istioctl: the current namespace, `default`). */
  readonly defaultNamespace?: string;
  /** Run the CRD schema checks (API-server side). Default true. */
  readonly crdChecks?: boolean;
  /** Run ward's advisory checks. Default false. */
  readonly advice?: boolean;
}

function isSecurity(loaded: LoadedResource): loaded is LoadedResource<SecurityResource> {
  return loaded.resource.kind === 'AuthorizationPolicy' || loaded.resource.kind === 'PeerAuthentication';
}

function webhookDiagnostics(loaded: LoadedResource<SecurityResource>, namespace: string): Diagnostic[] {
  const findings = new Findings(loaded, 'webhook');
  const resource = loaded.resource;
  if (!validateMetadata(resource, namespace, findings)) return findings.diagnostics;
  const metadataCount = findings.diagnostics.length;
  if (resource.kind === 'AuthorizationPolicy') validateAuthorizationPolicy(resource, findings);
  else validatePeerAuthentication(resource, findings);
  if (resource.kind !== 'AuthorizationPolicy') return findings.diagnostics;
  const prefix = `invalid policy ${resource.metadata.name}.${namespace}:`;
  return findings.diagnostics.map((diagnostic, index) =>
    index >= metadataCount && diagnostic.severity === 'error' ? { ...diagnostic, istioctlMessage: `${prefix} ${diagnostic.message}` } : diagnostic,
  );
}

/** Validates one AuthorizationPolicy or PeerAuthentication. */
export function validateResource(loaded: LoadedResource<SecurityResource>, options: ValidateOptions = {}): Diagnostic[] {
  const namespace = loaded.resource.metadata.namespace === '' ? (options.defaultNamespace ?? 'default') : loaded.resource.metadata.namespace;
  const diagnostics = webhookDiagnostics(loaded, namespace);
  if (options.crdChecks ?? true) {
    const crd = new Findings(loaded, 'crd');
    checkCrdSchema(loaded.resource, crd);
    diagnostics.push(...crd.diagnostics);
  }
  if (options.advice ?? false) {
    const advice = new Findings(loaded, 'advice');
    adviseResource(loaded.resource, advice);
    diagnostics.push(...advice.diagnostics);
  }
  return diagnostics;
}

/** Validates every security resource of `resources` (other kinds are skipped), in input order. */
export function validateResources(resources: readonly LoadedResource[], options: ValidateOptions = {}): Diagnostic[] {
  return resources.filter(isSecurity).flatMap((loaded) => validateResource(loaded, options));
}
