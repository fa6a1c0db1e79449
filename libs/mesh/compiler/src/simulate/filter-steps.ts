// One RBAC or ext_authz filter, as Envoy runs it: shadow engine first (stats and metadata only),
// then the enforced engine (allow, or stop with 403 / a closed connection). Filters come
// prepared (prepared-listener.ts): engines compiled, stat names and metadata keys precomputed.
import { evaluateCompiledRbac } from './compiled-rbac';
import type { LeafMemo } from './rule-program';
import type { DynamicMetadata } from './matchers';
import type { PreparedFilter } from './prepared-listener';
import type { RbacAttributes } from './rbac-engine';
import type { FilterEvaluation } from './result';

/** Where a step reports. */
export interface StepContext {
  readonly attributes: RbacAttributes;
  readonly stats: string[];
  /** `envoy.filters.http.rbac` or `envoy.filters.network.rbac`. */
  readonly metadataNamespace: string;
  /** Leaf results shared by the engines of this pass. */
  readonly memo: LeafMemo;
}

/** Sets metadata fields in place (the namespace's object belongs to this simulation). */
function metadataOf(metadata: DynamicMetadata, namespace: string): Record<string, unknown> {
  let fields = metadata.get(namespace);
  if (fields === undefined) {
    fields = {};
    metadata.set(namespace, fields);
  }
  return fields;
}

/** Runs an RBAC filter; `stopped` is true when the enforced engine denied. */
export function runRbacFilter(filter: Extract<PreparedFilter, { kind: 'rbac' }>, context: StepContext): FilterEvaluation {
  const { index, name, action } = filter;
  let shadow: FilterEvaluation['shadow'];
  if (filter.shadow !== undefined) {
    const prepared = filter.shadow;
    const result = evaluateCompiledRbac(prepared.engine, context.attributes, context.memo);
    context.stats.push(result.allowed ? prepared.allowedStat : prepared.deniedStat);
    const fields = metadataOf(context.attributes.metadata, context.metadataNamespace);
    if (result.matchedPolicy !== undefined) fields[prepared.policyIdKey] = result.matchedPolicy;
    fields[prepared.engineResultKey] = result.allowed ? 'allowed' : 'denied';
    shadow = result.matchedPolicy !== undefined ? { allowed: result.allowed, statPrefix: prepared.statPrefix, matchedPolicy: result.matchedPolicy } : { allowed: result.allowed, statPrefix: prepared.statPrefix };
  }
  const rules = filter.rules;
  if (rules === undefined) return shadow !== undefined ? { index, name, action, shadow, stopped: false } : { index, name, action, stopped: false };
  const result = evaluateCompiledRbac(rules.engine, context.attributes, context.memo);
  const enforced = result.matchedPolicy !== undefined ? { allowed: result.allowed, matchedPolicy: result.matchedPolicy } : { allowed: result.allowed };
  const fields = metadataOf(context.attributes.metadata, context.metadataNamespace);
  if (result.matchedPolicy !== undefined) fields[rules.policyIdKey] = result.matchedPolicy;
  fields[rules.engineResultKey] = result.allowed ? 'allowed' : 'denied';
  if (result.action === 'LOG') {
    metadataOf(context.attributes.metadata, 'envoy.common')['access_log_hint'] = result.matchedPolicy !== undefined;
    context.stats.push(result.matchedPolicy !== undefined ? rules.loggedStat : rules.notLoggedStat);
  }
  context.stats.push(result.allowed ? rules.allowedStat : rules.deniedStat);
  return shadow !== undefined ? { index, name, action, enforced, shadow, stopped: !result.allowed } : { index, name, action, enforced, stopped: !result.allowed };
}

/** Runs an ext_authz filter: enabled by its metadata matcher, answered by `decision`. */
export function runExtAuthzFilter(filter: Extract<PreparedFilter, { kind: 'ext_authz' }>, decision: 'allow' | 'deny', context: StepContext): FilterEvaluation {
  const { index, name } = filter;
  const enabled = filter.enabled === undefined || filter.enabled(context.attributes.metadata);
  if (!enabled) return { index, name, extAuthz: { enabled: false }, stopped: false };
  context.stats.push(decision === 'allow' ? filter.okStat : filter.deniedStat);
  return { index, name, extAuthz: { enabled: true, decision }, stopped: decision === 'deny' };
}
