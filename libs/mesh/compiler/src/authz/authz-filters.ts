// All authorization filters of one workload: CUSTOM pairs first, then LOG, DENY, ALLOW RBAC —
// the order they take in the inbound HTTP connection manager and on TCP filter chains.
import type { HttpFilter, NetworkFilter } from '@ward/mesh/envoy-api';
import type { AuthorizationPolicy } from '@ward/mesh/istio-api';
import type { DiagnosticSink } from '../diagnostics';
import type { MeshService, MeshSettings, UntranslatableRuleMode, Workload } from '../input';
import { buildCustomFilters } from './custom-filters';
import { resolveExtensionProviders } from './ext-authz';
import { buildLocalRbac, httpRbacFilter, networkRbacFilter, shadowRulesStatPrefix } from './local-filters';
import { selectAuthorizationPolicies, type SelectedPolicies } from './policy-selection';
import type { PolicyTranslationCache, RuleSetContext } from './rule-set';
import type { TrustDomainBundle } from './trust-domain';

/** Which builders run: istiod's golden tests build CUSTOM and local actions separately. */
export type BuilderScope = 'all' | 'custom' | 'local';

/** Everything the authorization part of the compiler needs. */
export interface AuthzBuildInput {
  readonly workload: Workload;
  readonly mesh: MeshSettings;
  readonly policies: readonly AuthorizationPolicy[];
  readonly services: readonly MeshService[];
  readonly bundle: TrustDomainBundle;
  readonly useFilterState: boolean;
  readonly untranslatable: UntranslatableRuleMode;
  readonly defaultNamespace: string;
  readonly scope: BuilderScope;
  /** Reuse translations across workloads (see {@link PolicyTranslationCache}). */
  readonly cache?: PolicyTranslationCache;
}

/** The authorization filters of one workload. */
export interface AuthzFilters {
  readonly http: HttpFilter[];
  readonly tcp: NetworkFilter[];
  readonly selected: SelectedPolicies;
}

/** Builds the HTTP and network authorization filters for the workload. */
export function buildAuthorizationFilters(input: AuthzBuildInput, sink: DiagnosticSink): AuthzFilters {
  const selected = selectAuthorizationPolicies(input.policies, input.workload, input.mesh.rootNamespace, input.defaultNamespace, sink);
  const providers = selected.custom.length > 0 ? resolveExtensionProviders(input.mesh.extensionProviders, input.services) : new Map();
  const build = (forTcp: boolean): Array<HttpFilter | NetworkFilter> => {
    const context: RuleSetContext = { forTcp, bundle: input.bundle, useFilterState: input.useFilterState, untranslatable: input.untranslatable, sink, ...(input.cache !== undefined ? { cache: input.cache } : {}) };
    const custom = input.scope === 'local' ? [] : buildCustomFilters(selected.custom, providers, input.mesh.enableMultipleCustomAuthzProviders, context);
    const local =
      input.scope === 'custom'
        ? []
        : buildLocalRbac(selected, context).map(({ pair }) => (forTcp ? networkRbacFilter(pair, shadowRulesStatPrefix(pair.shadowRules)) : httpRbacFilter(pair, shadowRulesStatPrefix(pair.shadowRules))));
    return [...custom, ...local];
  };
  return { http: build(false) as HttpFilter[], tcp: build(true) as NetworkFilter[], selected };
}
