/** Checks of `selector`, `targetRef` and `targetRefs` shared by the security kinds. */
import type { PolicyTargetReference, WorkloadSelector } from '../model/meta';
import { goQuote } from './go-quote';
import type { Findings } from './findings';

/** The kinds a policy may target, as istiod prints them (`CanonicalGroup/Version/Kind`). */
const ALLOWED_TARGET_REFS = [
  { group: 'core', version: 'v1', kind: 'Service' },
  { group: 'networking.istio.io', version: 'v1', kind: 'ServiceEntry' },
  { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway' },
  { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'GatewayClass' },
] as const;

const ALLOWED_TARGET_REFS_TEXT = `[${ALLOWED_TARGET_REFS.map((ref) => `${ref.group}/${ref.version}/${ref.kind}`).join(' ')}]`;

/** `validateWorkloadSelector`: errors for empty or wildcard labels, a warning for no labels. */
export function validateWorkloadSelector(selector: WorkloadSelector | undefined, findings: Findings): void {
  if (selector === undefined) return;
  const labels = Object.entries(selector.matchLabels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, value] of labels) {
    const path = `spec.selector.matchLabels[${key}]`;
    const shown = goQuote(`${key}=${value}`);
    if (key === '') findings.error('SELECTOR_EMPTY_KEY', `empty key is not supported in selector: ${shown}`, path);
    if (key.includes('*') || value.includes('*')) findings.error('SELECTOR_WILDCARD', `wildcard is not supported in selector: ${shown}`, path);
  }
  if (labels.length === 0) findings.warning('SELECTOR_NO_LABELS', 'workload selector specified without labels', 'spec.selector');
}

/** `validateOneOfSelectorType`: at most one of selector, targetRef and targetRefs. */
export function validateOneOfSelectorType(
  selector: WorkloadSelector | undefined,
  targetRef: PolicyTargetReference | undefined,
  targetRefs: readonly PolicyTargetReference[] | undefined,
  findings: Findings,
): void {
  const set = [selector !== undefined, targetRef !== undefined, (targetRefs?.length ?? 0) > 0].filter(Boolean).length;
  if (set > 1) findings.error('SELECTOR_AND_TARGET_REFS', 'only one of targetRefs or workloadSelector can be set', 'spec');
}

/** `validatePolicyTargetReference` for one reference at `path`. */
export function validatePolicyTargetReference(ref: PolicyTargetReference | undefined, path: string, findings: Findings): void {
  if (ref === undefined) return;
  if (ref.name === '') findings.error('TARGET_REF_NAME_MISSING', 'targetRef name must be set', `${path}.name`);
  if (ref.namespace !== '') {
    findings.error('TARGET_REF_NAMESPACE_SET', 'targetRef namespace must not be set; cross namespace referencing is not supported', `${path}.namespace`);
  }
  const group = ref.group === '' ? 'core' : ref.group;
  const allowed = ALLOWED_TARGET_REFS.some((candidate) => candidate.kind === ref.kind && candidate.group === group);
  if (!allowed) {
    findings.error('TARGET_REF_KIND_NOT_ALLOWED', `targetRef must be to one of ${ALLOWED_TARGET_REFS_TEXT} but was ${ref.group}/${ref.kind}`, `${path}.kind`);
  }
}
