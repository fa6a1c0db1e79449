// ALLOW, DENY and AUDIT policies → RBAC filters in istiod's order: LOG (audit), DENY, ALLOW.
// An action without policies gets no filter: in particular no ALLOW filter without an ALLOW policy.
import type { HttpFilter, NetworkFilter, Policy, RBAC } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import type { SelectedPolicies, SelectedPolicy } from './policy-selection';
import { buildNamedPolicies, type BuildAction, type RuleSetContext } from './rule-set';

/** Stat prefixes of the shadow engines (Istio's constants). */
export const SHADOW_STAT_PREFIX = Object.freeze({ allow: 'istio_dry_run_allow_', deny: 'istio_dry_run_deny_', extAuthz: 'istio_ext_authz_' });
/** The network RBAC filter's stat prefix. */
export const TCP_STAT_PREFIX = 'tcp.';

type EnvoyAction = 'ALLOW' | 'DENY' | 'LOG';

/** Enforced and dry-run RBAC of one action; absent when no policy of that kind exists. */
export interface RbacPair {
  readonly rules?: RBAC;
  readonly shadowRules?: RBAC;
}

/** protojson of RBAC: ALLOW (enum 0) and an empty policy map are omitted. */
export function rbacMessage(action: EnvoyAction, policies: ReadonlyArray<readonly [string, Policy]>): RBAC {
  const message: { action?: 'DENY' | 'LOG'; policies?: Record<string, Policy> } = {};
  if (action !== 'ALLOW') message.action = action;
  if (policies.length > 0) message.policies = Object.fromEntries(policies);
  return message;
}

/** istiod's quirk: the prefix follows the shadow action, and an absent shadow RBAC counts as ALLOW. */
export function shadowRulesStatPrefix(shadowRules: RBAC | undefined): string | undefined {
  const action = shadowRules?.action ?? 'ALLOW';
  if (action === 'ALLOW') return SHADOW_STAT_PREFIX.allow;
  if (action === 'DENY') return SHADOW_STAT_PREFIX.deny;
  return undefined;
}

function buildPair(policies: readonly SelectedPolicy[], action: BuildAction, envoyAction: EnvoyAction, context: RuleSetContext): RbacPair | undefined {
  if (policies.length === 0) return undefined;
  const enforced: Array<readonly [string, Policy]> = [];
  const shadow: Array<readonly [string, Policy]> = [];
  for (const selected of policies) {
    const named = buildNamedPolicies(selected, action, undefined, context);
    (selected.dryRun ? shadow : enforced).push(...named.policies);
  }
  const hasEnforced = policies.some((p) => !p.dryRun);
  const hasShadow = policies.some((p) => p.dryRun);
  return {
    ...(hasEnforced ? { rules: rbacMessage(envoyAction, enforced) } : {}),
    ...(hasShadow ? { shadowRules: rbacMessage(envoyAction, shadow) } : {}),
  };
}

/** The RBAC pairs of the local actions in filter order (LOG, DENY, ALLOW). */
export function buildLocalRbac(selected: SelectedPolicies, context: RuleSetContext): Array<{ action: EnvoyAction; pair: RbacPair }> {
  const out: Array<{ action: EnvoyAction; pair: RbacPair }> = [];
  const steps: Array<[readonly SelectedPolicy[], BuildAction, EnvoyAction]> = [
    [selected.audit, 'AUDIT', 'LOG'],
    [selected.deny, 'DENY', 'DENY'],
    [selected.allow, 'ALLOW', 'ALLOW'],
  ];
  for (const [policies, action, envoyAction] of steps) {
    const pair = buildPair(policies, action, envoyAction, context);
    if (pair !== undefined) out.push({ action: envoyAction, pair });
  }
  return out;
}

/** `envoy.filters.http.rbac` with the pair. */
/** `statPrefix` is the shadow rules stat prefix; `undefined` leaves the field out. */
export function httpRbacFilter(pair: RbacPair, statPrefix: string | undefined): HttpFilter {
  return {
    name: FILTER_NAMES.httpRbac,
    typedConfig: {
      '@type': TYPE_URLS.httpRbac,
      ...(pair.rules !== undefined ? { rules: pair.rules } : {}),
      ...(pair.shadowRules !== undefined ? { shadowRules: pair.shadowRules } : {}),
      ...(statPrefix !== undefined && statPrefix !== '' ? { shadowRulesStatPrefix: statPrefix } : {}),
    },
  };
}

/** `envoy.filters.network.rbac` with the pair (always `statPrefix: tcp.`). */
/** `statPrefix` is the shadow rules stat prefix; `undefined` leaves the field out. */
export function networkRbacFilter(pair: RbacPair, statPrefix: string | undefined): NetworkFilter {
  return {
    name: FILTER_NAMES.networkRbac,
    typedConfig: {
      '@type': TYPE_URLS.networkRbac,
      ...(pair.rules !== undefined ? { rules: pair.rules } : {}),
      ...(pair.shadowRules !== undefined ? { shadowRules: pair.shadowRules } : {}),
      ...(statPrefix !== undefined && statPrefix !== '' ? { shadowRulesStatPrefix: statPrefix } : {}),
      statPrefix: TCP_STAT_PREFIX,
    },
  };
}
