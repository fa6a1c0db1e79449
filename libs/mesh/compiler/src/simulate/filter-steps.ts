// One RBAC or ext_authz filter, as Envoy runs it: shadow engine first (stats and metadata only),
// then the enforced engine (allow, or stop with 403 / a closed connection).
import type { MetadataMatcher, RBAC } from '@ward/mesh/envoy-api';
import { evaluateRbac, type RbacAttributes } from './rbac-engine';
import { matchMetadata } from './matchers';
import type { FilterEvaluation } from './result';

/** The typed config of an HTTP or network RBAC filter. */
export interface RbacFilterConfig {
  readonly rules?: RBAC;
  readonly shadowRules?: RBAC;
  readonly shadowRulesStatPrefix?: string;
  readonly rulesStatPrefix?: string;
  readonly statPrefix?: string;
}

/** Where a step reports. */
export interface StepContext {
  readonly attributes: RbacAttributes;
  readonly stats: string[];
  /** `http.<hcm stat_prefix>.` for HTTP filters, the network filter's `stat_prefix` for TCP. */
  readonly statRoot: string;
  /** `envoy.filters.http.rbac` or `envoy.filters.network.rbac`. */
  readonly metadataNamespace: string;
}

function writeMetadata(context: StepContext, namespace: string, fields: Record<string, unknown>): void {
  const existing = context.attributes.metadata.get(namespace) ?? {};
  context.attributes.metadata.set(namespace, { ...existing, ...fields });
}

/** Runs an RBAC filter; `stopped` is true when the enforced engine denied. */
export function runRbacFilter(index: number, name: string, config: RbacFilterConfig, context: StepContext): FilterEvaluation {
  const root = `${context.statRoot}rbac.`;
  let shadow: FilterEvaluation['shadow'];
  if (config.shadowRules !== undefined) {
    const prefix = config.shadowRulesStatPrefix ?? '';
    const result = evaluateRbac(config.shadowRules, context.attributes);
    context.stats.push(`${root}${prefix}${result.allowed ? 'shadow_allowed' : 'shadow_denied'}`);
    writeMetadata(context, context.metadataNamespace, {
      ...(result.matchedPolicy !== undefined ? { [`${prefix}shadow_effective_policy_id`]: result.matchedPolicy } : {}),
      [`${prefix}shadow_engine_result`]: result.allowed ? 'allowed' : 'denied',
    });
    shadow = { allowed: result.allowed, statPrefix: prefix, ...(result.matchedPolicy !== undefined ? { matchedPolicy: result.matchedPolicy } : {}) };
  }
  const action = config.rules?.action ?? config.shadowRules?.action ?? 'ALLOW';
  if (config.rules === undefined) return { index, name, action, ...(shadow !== undefined ? { shadow } : {}), stopped: false };
  const result = evaluateRbac(config.rules, context.attributes);
  const enforced = { allowed: result.allowed, ...(result.matchedPolicy !== undefined ? { matchedPolicy: result.matchedPolicy } : {}) };
  const rulesPrefix = config.rulesStatPrefix ?? '';
  writeMetadata(context, context.metadataNamespace, {
    ...(result.matchedPolicy !== undefined ? { [`${rulesPrefix}enforced_effective_policy_id`]: result.matchedPolicy } : {}),
    [`${rulesPrefix}enforced_engine_result`]: result.allowed ? 'allowed' : 'denied',
  });
  if (result.action === 'LOG') {
    writeMetadata(context, 'envoy.common', { access_log_hint: result.matchedPolicy !== undefined });
    context.stats.push(`${root}${rulesPrefix}${result.matchedPolicy !== undefined ? 'logged' : 'not_logged'}`);
  }
  context.stats.push(`${root}${rulesPrefix}${result.allowed ? 'allowed' : 'denied'}`);
  return { index, name, action, enforced, ...(shadow !== undefined ? { shadow } : {}), stopped: !result.allowed };
}

/** Runs an ext_authz filter: enabled by its metadata matcher, answered by `decision`. */
export function runExtAuthzFilter(
  index: number,
  name: string,
  config: { readonly filterEnabledMetadata?: MetadataMatcher },
  decision: 'allow' | 'deny',
  context: StepContext,
): FilterEvaluation {
  const enabled = config.filterEnabledMetadata === undefined || matchMetadata(config.filterEnabledMetadata, context.attributes.metadata);
  if (!enabled) return { index, name, extAuthz: { enabled: false }, stopped: false };
  context.stats.push(`${context.statRoot}ext_authz.${decision === 'allow' ? 'ok' : 'denied'}`);
  return { index, name, extAuthz: { enabled: true, decision }, stopped: decision === 'deny' };
}
