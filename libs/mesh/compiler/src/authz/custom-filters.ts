// CUSTOM policies → per provider (sorted by name) a shadow RBAC filter that marks matching
// requests, followed by the ext_authz filter enabled by that mark (spec §2.5). A bad provider, or
// several providers without PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS, gives enforced deny rules.
import type { HttpFilter, NetworkFilter, Policy, RBAC } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import type { ResolvedProvider } from './ext-authz';
import { SHADOW_STAT_PREFIX, httpRbacFilter, networkRbacFilter, rbacMessage } from './local-filters';
import type { SelectedPolicy } from './policy-selection';
import { buildNamedPolicies, type RuleSetContext } from './rule-set';

/** Suffix of the deny rules that stand in for an unusable CUSTOM provider. */
export const BAD_CUSTOM_ACTION_SUFFIX = '-deny-due-to-bad-CUSTOM-action';

interface ProviderRules {
  readonly enforced: Array<readonly [string, Policy]>;
  readonly dryRun: Array<readonly [string, Policy]>;
}

function groupByProvider(policies: readonly SelectedPolicy[], context: RuleSetContext): Map<string, ProviderRules> {
  const byProvider = new Map<string, ProviderRules>();
  for (const selected of policies) {
    const provider = selected.policy.spec.provider?.name ?? '';
    let rules = byProvider.get(provider);
    if (rules === undefined) {
      rules = { enforced: [], dryRun: [] };
      byProvider.set(provider, rules);
    }
    const named = buildNamedPolicies(selected, 'CUSTOM', provider, context);
    (selected.dryRun ? rules.dryRun : rules.enforced).push(...named.policies);
  }
  return byProvider;
}

function badCustomDenyRules(rules: ProviderRules): RBAC {
  return rbacMessage(
    'DENY',
    rules.enforced.map(([name, policy]) => [`${name}${BAD_CUSTOM_ACTION_SUFFIX}`, policy] as const),
  );
}

/** The shadow/enforced RBAC pair of a usable provider (istiod puts dry-run CUSTOM rules in `rules`). */
function providerRbac(rules: ProviderRules): { rules?: RBAC; shadowRules: RBAC } {
  return {
    shadowRules: rbacMessage('DENY', rules.enforced),
    ...(rules.dryRun.length > 0 ? { rules: rbacMessage('DENY', rules.dryRun) } : {}),
  };
}

/** The CUSTOM filters of one filter type. */
export function buildCustomFilters(
  policies: readonly SelectedPolicy[],
  providers: ReadonlyMap<string, ResolvedProvider>,
  enableMultipleProviders: boolean,
  context: RuleSetContext,
): Array<HttpFilter | NetworkFilter> {
  if (policies.length === 0) return [];
  const byProvider = groupByProvider(policies, context);
  const names = [...byProvider.keys()].sort();
  const rbacFilter = (pair: { rules?: RBAC; shadowRules?: RBAC }, prefix: string | undefined): HttpFilter | NetworkFilter =>
    context.forTcp ? networkRbacFilter(pair, prefix) : httpRbacFilter(pair, prefix);
  const resource = { kind: 'MeshSettings' as const, namespace: '', name: 'extensionProviders' };
  if (names.length > 1 && !enableMultipleProviders) {
    context.sink.push({
      code: 'COMPILE_CUSTOM_MULTIPLE_PROVIDERS',
      severity: 'error',
      resource,
      message: `multiple CUSTOM authorization providers per workload require PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS, found ${names.length} providers: [${names.join(' ')}]; requests matching CUSTOM rules are denied`,
    });
    return names.map((name) => rbacFilter({ rules: badCustomDenyRules(byProvider.get(name) ?? { enforced: [], dryRun: [] }) }, undefined));
  }
  const filters: Array<HttpFilter | NetworkFilter> = [];
  for (const name of names) {
    const rules = byProvider.get(name) ?? { enforced: [], dryRun: [] };
    const provider = providers.get(name);
    if (provider === undefined || provider.errors.length > 0 || provider.http === undefined) {
      const why = provider === undefined ? `available providers are [${[...providers.keys()].join(' ')}] but found ${JSON.stringify(name)}` : provider.errors.join('; ');
      context.sink.push({ code: 'COMPILE_CUSTOM_PROVIDER_INVALID', severity: 'error', resource: { ...resource, name }, message: `CUSTOM provider ${JSON.stringify(name)} cannot be used (${why}); requests matching its rules are denied` });
      filters.push(rbacFilter({ rules: badCustomDenyRules(rules) }, undefined));
      continue;
    }
    if (context.forTcp && provider.tcp === undefined) {
      context.sink.push({ code: 'COMPILE_CUSTOM_HTTP_PROVIDER_ON_TCP', severity: 'info', resource: { ...resource, name }, message: `HTTP ext_authz provider ${JSON.stringify(name)} does not apply to TCP traffic` });
      continue;
    }
    filters.push(rbacFilter(providerRbac(rules), SHADOW_STAT_PREFIX.extAuthz));
    filters.push(
      context.forTcp
        ? { name: FILTER_NAMES.networkExtAuthz, typedConfig: { '@type': TYPE_URLS.networkExtAuthz, ...provider.tcp } }
        : { name: FILTER_NAMES.httpExtAuthz, typedConfig: { '@type': TYPE_URLS.httpExtAuthz, ...provider.http } },
    );
  }
  return filters;
}
