// Which AuthorizationPolicies apply to a sidecar workload (spec §1.1), bucketed by action.
import { dryRunSetting, type AuthorizationPolicy } from '@ward/mesh/istio-api';
import type { DiagnosticSink } from '../diagnostics';
import type { Workload } from '../input';

/** A policy that applies to the workload, with what the builders need to know about it. */
export interface SelectedPolicy {
  readonly policy: AuthorizationPolicy;
  /** The namespace used in names and defaults (`metadata.namespace`, or the default namespace). */
  readonly namespace: string;
  readonly name: string;
  /** `istio.io/dry-run` parsed as a Go boolean (an invalid value means enforced). */
  readonly dryRun: boolean;
}

/** Applicable policies by action, each list in istiod's order. */
export interface SelectedPolicies {
  readonly allow: readonly SelectedPolicy[];
  readonly deny: readonly SelectedPolicy[];
  readonly audit: readonly SelectedPolicy[];
  readonly custom: readonly SelectedPolicy[];
}

/** `true` when every selector label is on the workload (no selector: always). */
export function selectorMatches(matchLabels: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (matchLabels === undefined) return true;
  return Object.entries(matchLabels).every(([key, value]) => labels[key] === value);
}

/** Creation time in ms for ordering; a missing or unreadable timestamp sorts first (Go's zero time). */
export function creationTimeMs(timestamp: string | undefined): number {
  if (timestamp === undefined || timestamp === '') return Number.NEGATIVE_INFINITY;
  const parsed = Date.parse(timestamp);
  return Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
}

interface Ordered {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly creationTimestamp?: string };
}

/** istiod's `sortConfigByCreationTime`: oldest first, then name, then namespace. */
export function compareByCreation(a: Ordered, b: Ordered): number {
  const time = creationTimeMs(a.metadata.creationTimestamp) - creationTimeMs(b.metadata.creationTimestamp);
  if (time !== 0 && !Number.isNaN(time)) return time < 0 ? -1 : 1;
  if (a.metadata.name !== b.metadata.name) return a.metadata.name < b.metadata.name ? -1 : 1;
  if (a.metadata.namespace !== b.metadata.namespace) return a.metadata.namespace < b.metadata.namespace ? -1 : 1;
  return 0;
}

function hasTargetRefs(policy: AuthorizationPolicy): boolean {
  return policy.spec.targetRef !== undefined || (policy.spec.targetRefs?.length ?? 0) > 0;
}

/**
 * Selects the policies of the root namespace and the workload's namespace that attach to the
 * workload: no `targetRef(s)`, and a selector (if any) whose labels the workload carries.
 */
export function selectAuthorizationPolicies(
  policies: readonly AuthorizationPolicy[],
  workload: Workload,
  rootNamespace: string,
  defaultNamespace: string,
  sink: DiagnosticSink,
): SelectedPolicies {
  const lookup = [...new Set([rootNamespace, workload.namespace])];
  const namespaceOf = (p: AuthorizationPolicy): string => (p.metadata.namespace === '' ? defaultNamespace : p.metadata.namespace);
  const sorted = [...policies].sort(compareByCreation);
  const buckets = { allow: [] as SelectedPolicy[], deny: [] as SelectedPolicy[], audit: [] as SelectedPolicy[], custom: [] as SelectedPolicy[] };
  for (const namespace of lookup) {
    for (const policy of sorted) {
      if (namespaceOf(policy) !== namespace) continue;
      const ref = { kind: 'AuthorizationPolicy' as const, namespace, name: policy.metadata.name };
      if (hasTargetRefs(policy)) {
        sink.push({ code: 'COMPILE_TARGET_REF_IGNORED', severity: 'info', message: 'a policy with targetRef(s) never applies to a sidecar workload', resource: ref, path: 'spec.targetRefs' });
        continue;
      }
      if (!selectorMatches(policy.spec.selector?.matchLabels, workload.labels)) continue;
      const setting = dryRunSetting(policy.metadata);
      if (setting.kind === 'invalid') {
        sink.push({
          code: 'COMPILE_DRY_RUN_INVALID',
          severity: 'warning',
          message: `failed to parse the value of istio.io/dry-run: ${JSON.stringify(setting.value)} is not a boolean; the policy is enforced`,
          resource: ref,
          path: 'metadata.annotations["istio.io/dry-run"]',
        });
      }
      const selected: SelectedPolicy = { policy, namespace, name: policy.metadata.name, dryRun: setting.kind === 'parsed' && setting.dryRun };
      const bucket = policy.spec.action === 'ALLOW' ? buckets.allow : policy.spec.action === 'DENY' ? buckets.deny : policy.spec.action === 'AUDIT' ? buckets.audit : buckets.custom;
      bucket.push(selected);
    }
  }
  return buckets;
}
