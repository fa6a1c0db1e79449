/**
 * istiod's metadata checks, run before the kind's own validation (`validateMetadata`): the
 * `istio.io/dry-run` annotation and the internal annotations users may not set. An error here
 * stops the validation of the resource, as in istiod.
 */
import { DRY_RUN_ANNOTATION, parseGoBool } from '../model/dry-run';
import type { SecurityResource } from '../model/resources';
import { goQuote } from './go-quote';
import type { Findings } from './findings';

const ALWAYS_REJECT = 'internal.istio.io/webhook-always-reject';
const INTERNAL_PARENT_NAMESPACE = 'internal.istio.io/parent-namespace';
const INTERNAL_PARENT_NAMES = 'internal.istio.io/parents';

function annotationPath(key: string): string {
  return `metadata.annotations[${key}]`;
}

function checkDryRun(resource: SecurityResource, namespace: string, findings: Findings): void {
  const value = resource.metadata.annotations[DRY_RUN_ANNOTATION];
  if (value === undefined) return;
  const name = `${namespace}/${resource.metadata.name}`;
  const path = annotationPath(DRY_RUN_ANNOTATION);
  if (resource.kind !== 'AuthorizationPolicy') {
    findings.error('META_DRY_RUN_UNSUPPORTED_KIND', `${name} has unsupported annotation ${DRY_RUN_ANNOTATION}, please remove the annotation`, path);
    return;
  }
  const action = resource.spec.action;
  if (action !== 'ALLOW' && action !== 'DENY') {
    findings.error('META_DRY_RUN_UNSUPPORTED_ACTION', `the annotation ${DRY_RUN_ANNOTATION} currently only supports action ALLOW/DENY, found action ${action} in ${name}`, path);
    return;
  }
  if (parseGoBool(value) === undefined) {
    findings.error(
      'META_DRY_RUN_INVALID_VALUE',
      `${name} has annotation ${DRY_RUN_ANNOTATION} with invalid value (${value}): strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`,
      path,
    );
  }
}

/**
 * Runs the metadata checks; `namespace` is the namespace istioctl validates with (the written one,
 * or the default namespace). Returns false when the resource must not be validated further.
 */
export function validateMetadata(resource: SecurityResource, namespace: string, findings: Findings): boolean {
  const before = findings.errorCount();
  checkDryRun(resource, namespace, findings);
  if (findings.errorCount() > before) return false;
  const annotations = resource.metadata.annotations;
  if (annotations[ALWAYS_REJECT] !== undefined) {
    findings.error('META_ALWAYS_REJECT', `${goQuote(ALWAYS_REJECT)} annotation found, rejecting`, annotationPath(ALWAYS_REJECT));
    return false;
  }
  for (const key of [INTERNAL_PARENT_NAMESPACE, INTERNAL_PARENT_NAMES]) {
    if (annotations[key] !== undefined) {
      findings.error('META_INTERNAL_ANNOTATION', `${goQuote(key)} annotation found, this may not be set by users`, annotationPath(key));
      return false;
    }
  }
  return true;
}
