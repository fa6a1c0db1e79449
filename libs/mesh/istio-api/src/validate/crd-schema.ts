/**
 * The CRD's OpenAPI/CEL constraints that the Kubernetes API server enforces and istiod's webhook
 * does not (limits and patterns). Constraints both check (e.g. serviceAccounts with namespaces)
 * are reported once, by the webhook checks. Messages follow the API server's wording.
 */
import type { AuthorizationPolicy } from '../model/authorization-policy';
import type { PolicyTargetReference, WorkloadSelector } from '../model/meta';
import type { SecurityResource } from '../model/resources';
import { utf8ByteLength } from '../load/limits';
import type { Findings } from './findings';

const MAX_RULES = 512;
const MAX_FROM = 512;
const MAX_TARGET_REFS = 16;
const MAX_LABELS = 4096;
const MAX_LABEL_VALUE_BYTES = 63;
const GROUP_PATTERN = '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const KIND_PATTERN = '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$';

function tooMany(findings: Findings, path: string, count: number, limit: number): void {
  if (count > limit) findings.error('CRD_TOO_MANY_ITEMS', `${path}: Too many: ${count}: must have at most ${limit} items`, path);
}

function checkSelector(selector: WorkloadSelector | undefined, findings: Findings): void {
  if (selector === undefined) return;
  const labels = Object.entries(selector.matchLabels);
  if (labels.length > MAX_LABELS) {
    findings.error('CRD_TOO_MANY_PROPERTIES', `spec.selector.matchLabels: Too many: ${labels.length}: must have at most ${MAX_LABELS} items`, 'spec.selector.matchLabels');
  }
  for (const [key, value] of labels) {
    if (utf8ByteLength(value) > MAX_LABEL_VALUE_BYTES) {
      const path = `spec.selector.matchLabels[${key}]`;
      findings.error('CRD_TOO_LONG', `spec.selector.matchLabels.${key}: Too long: may not be more than ${MAX_LABEL_VALUE_BYTES} bytes`, path);
    }
  }
}

function checkTargetRef(ref: PolicyTargetReference, path: string, findings: Findings): void {
  const lengthLimits: [keyof PolicyTargetReference, number][] = [['group', 253], ['kind', 63], ['name', 253]];
  for (const [field, limit] of lengthLimits) {
    if (utf8ByteLength(ref[field]) > limit) findings.error('CRD_TOO_LONG', `${path}.${field}: Too long: may not be more than ${limit} bytes`, `${path}.${field}`);
  }
  if (!new RegExp(GROUP_PATTERN).test(ref.group)) findings.error('CRD_PATTERN_MISMATCH', `${path}.group in body should match '${GROUP_PATTERN}'`, `${path}.group`);
  if (ref.kind === '') findings.error('CRD_REQUIRED', `${path}.kind in body should be at least 1 chars long`, `${path}.kind`);
  else if (!new RegExp(KIND_PATTERN).test(ref.kind)) findings.error('CRD_PATTERN_MISMATCH', `${path}.kind in body should match '${KIND_PATTERN}'`, `${path}.kind`);
}

function checkAuthorizationPolicy(policy: AuthorizationPolicy, findings: Findings): void {
  const spec = policy.spec;
  tooMany(findings, 'spec.rules', spec.rules?.length ?? 0, MAX_RULES);
  (spec.rules ?? []).forEach((rule, index) => tooMany(findings, `spec.rules[${index}].from`, rule.from?.length ?? 0, MAX_FROM));
  tooMany(findings, 'spec.targetRefs', spec.targetRefs?.length ?? 0, MAX_TARGET_REFS);
  if (spec.targetRef !== undefined) checkTargetRef(spec.targetRef, 'spec.targetRef', findings);
  (spec.targetRefs ?? []).forEach((ref, index) => checkTargetRef(ref, `spec.targetRefs[${index}]`, findings));
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The API server's object-meta checks: a name (RFC 1123 subdomain) and a namespace (RFC 1123 label). */
function checkObjectMeta(resource: SecurityResource, findings: Findings): void {
  const { name, namespace } = resource.metadata;
  if (name === '') findings.error('CRD_REQUIRED', 'metadata.name: Required value: name or generateName is required', 'metadata');
  else if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    findings.error(
      'CRD_PATTERN_MISMATCH',
      `metadata.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      'metadata.name',
    );
  }
  if (namespace !== '' && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    findings.error(
      'CRD_PATTERN_MISMATCH',
      `metadata.namespace: Invalid value: ${JSON.stringify(namespace)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character`,
      'metadata.namespace',
    );
  }
}

/** Adds the CRD-only findings for `resource`. */
export function checkCrdSchema(resource: SecurityResource, findings: Findings): void {
  checkObjectMeta(resource, findings);
  checkSelector(resource.spec.selector, findings);
  if (resource.kind === 'AuthorizationPolicy') checkAuthorizationPolicy(resource, findings);
}
