// Policies of one action → named Envoy RBAC policies (`ns[NS]-policy[NAME]-rule[i]`), enforced
// and dry-run ones kept apart, with a diagnostic for everything that did not translate as written.
import type { Policy } from '@ward/mesh/envoy-api';
import type { DiagnosticResource, DiagnosticSink } from '../diagnostics';
import type { UntranslatableRuleMode } from '../input';
import type { GeneratorContext } from './generators';
import { MATCH_NEVER_POLICY, generateRulePolicy, type GenerationProblem } from './policy-generation';
import type { SelectedPolicy } from './policy-selection';
import { buildRuleModel } from './rule-model';
import type { TrustDomainBundle } from './trust-domain';

/** Policy action as the builders see it (CUSTOM rules are built with DENY semantics). */
export type BuildAction = 'ALLOW' | 'DENY' | 'AUDIT' | 'CUSTOM';

/** The named Envoy policies of one policy. */
export interface NamedPolicies {
  readonly source: SelectedPolicy;
  readonly policies: ReadonlyArray<readonly [string, Policy]>;
}

/** Settings shared by every rule of one build. */
export interface RuleSetContext {
  readonly forTcp: boolean;
  readonly bundle: TrustDomainBundle;
  readonly useFilterState: boolean;
  readonly untranslatable: UntranslatableRuleMode;
  readonly sink: DiagnosticSink;
  readonly cache?: PolicyTranslationCache;
}

/**
 * Translations of policies, reusable across workloads: a policy's Envoy policies depend only on
 * the policy and the build settings, never on the workload. Keyed by policy object identity.
 */
export class PolicyTranslationCache {
  private readonly entries = new WeakMap<object, Map<string, { named: NamedPolicies; diagnostics: DiagnosticSink }>>();

  /** The cached translation, or a fresh one (stored) from `build`. */
  translate(policy: object, key: string, sink: DiagnosticSink, build: (sink: DiagnosticSink) => NamedPolicies): NamedPolicies {
    let byKey = this.entries.get(policy);
    if (byKey === undefined) {
      byKey = new Map();
      this.entries.set(policy, byKey);
    }
    let entry = byKey.get(key);
    if (entry === undefined) {
      const diagnostics: DiagnosticSink = [];
      entry = { named: build(diagnostics), diagnostics };
      byKey.set(key, entry);
    }
    sink.push(...entry.diagnostics);
    return entry.named;
  }
}

/** Envoy policy matching every request or connection. */
export const MATCH_ALL_POLICY: Policy = Object.freeze({
  permissions: [{ andRules: { rules: [{ any: true }] } }],
  principals: [{ andIds: { ids: [{ any: true }] } }],
});

/** `[istio-ext-authz-<provider>-]ns[NS]-policy[NAME]-rule[i]`. */
export function policyRuleName(namespace: string, name: string, ruleIndex: number, customProvider: string | undefined): string {
  const prefix = customProvider === undefined ? '' : customProvider === '' ? 'istio-ext-authz-' : `istio-ext-authz-${customProvider}-`;
  return `${prefix}ns[${namespace}]-policy[${name}]-rule[${ruleIndex}]`;
}

function resourceOf(selected: SelectedPolicy): DiagnosticResource {
  return { kind: 'AuthorizationPolicy', namespace: selected.namespace, name: selected.name };
}

function reportProblem(problem: GenerationProblem, action: BuildAction, dropped: boolean, selected: SelectedPolicy, context: RuleSetContext): void {
  const filter = context.forTcp ? 'TCP' : 'HTTP';
  const resource = resourceOf(selected);
  if (problem.failure.httpOnly) {
    context.sink.push(
      dropped
        ? { code: 'COMPILE_TCP_RULE_DROPPED', severity: 'warning', resource, path: problem.path, message: `ALLOW rule left out of the TCP filter: ${problem.failure.message}` }
        : { code: 'COMPILE_TCP_RULE_WIDENED', severity: 'warning', resource, path: problem.path, message: `${action} rule widened on the TCP filter (HTTP-only value ignored): ${problem.failure.message}` },
    );
    return;
  }
  const effect = dropped ? `the ALLOW rule is left out of the ${filter} filter` : `the value is left out of the ${action} rule on the ${filter} filter`;
  context.sink.push({ code: 'COMPILE_INVALID_VALUE', severity: 'error', resource, path: problem.path, message: `${problem.failure.message}; ${effect}` });
}

/** One diagnostic per rule for the HTTP-only values left out on a TCP filter, located at the first one. */
function reportWidened(problems: readonly GenerationProblem[], rulePath: string, action: BuildAction, selected: SelectedPolicy, context: RuleSetContext): void {
  const fields = [...new Set(problems.map((p) => p.path.replace(/\[\d+\]$/u, '').slice(rulePath.length + 1)))];
  context.sink.push({
    code: 'COMPILE_TCP_RULE_WIDENED',
    severity: 'warning',
    resource: resourceOf(selected),
    path: problems[0]?.path ?? rulePath,
    message: `${action} rule widened on the TCP filter: HTTP-only ${fields.join(', ')} ignored`,
  });
}

/** The fail-closed stand-in for a rule istiod would skip, or undefined to skip it too. */
function untranslatableStandIn(action: BuildAction, context: RuleSetContext): Policy | undefined {
  if (context.untranslatable === 'istiod') return undefined;
  return action === 'DENY' || action === 'CUSTOM' ? MATCH_ALL_POLICY : undefined;
}

/** Builds the named policies of `selected` for one action and filter type (cached when a cache is given). */
export function buildNamedPolicies(selected: SelectedPolicy, action: BuildAction, customProvider: string | undefined, context: RuleSetContext): NamedPolicies {
  if (context.cache === undefined) return translatePolicy(selected, action, customProvider, context);
  const key = [context.forTcp, action, customProvider ?? '', selected.namespace, context.bundle.join(','), context.useFilterState, context.untranslatable].join('|');
  const named = context.cache.translate(selected.policy, key, context.sink, (sink) => translatePolicy(selected, action, customProvider, { ...context, sink }));
  return { ...named, source: selected };
}

function translatePolicy(selected: SelectedPolicy, action: BuildAction, customProvider: string | undefined, context: RuleSetContext): NamedPolicies {
  const rules = selected.policy.spec.rules ?? [];
  const out: Array<readonly [string, Policy]> = [];
  const generatorContext: GeneratorContext = { forTcp: context.forTcp, policyNamespace: selected.namespace, useFilterState: context.useFilterState };
  if (rules.length === 0) {
    context.sink.push({
      code: 'COMPILE_POLICY_WITHOUT_RULES',
      severity: action === 'ALLOW' ? 'info' : 'warning',
      resource: resourceOf(selected),
      path: 'spec.rules',
      message: action === 'ALLOW' ? 'ALLOW policy without rules allows nothing' : `${action} policy without rules matches nothing`,
    });
    out.push([policyRuleName(selected.namespace, selected.name, 0, customProvider), MATCH_NEVER_POLICY]);
    return { source: selected, policies: out };
  }
  rules.forEach((rule, index) => {
    const name = policyRuleName(selected.namespace, selected.name, index, customProvider);
    const model = buildRuleModel(rule, `spec.rules[${index}]`, context.bundle);
    if ('unknownAttribute' in model) {
      const standIn = untranslatableStandIn(action, context);
      const effect = standIn === undefined ? 'the rule is skipped' : 'the rule fails closed: it matches every request';
      context.sink.push({ code: 'COMPILE_UNKNOWN_ATTRIBUTE', severity: 'error', resource: resourceOf(selected), path: model.path, message: `unknown attribute ${JSON.stringify(model.unknownAttribute)}; ${effect}` });
      if (standIn !== undefined) out.push([name, standIn]);
      return;
    }
    for (const principal of model.foreignPrincipals) {
      context.sink.push({ code: 'COMPILE_FOREIGN_TRUST_DOMAIN', severity: 'warning', resource: resourceOf(selected), path: `spec.rules[${index}]`, message: `trust domain of principal ${JSON.stringify(principal)} does not match the current trust domain or its aliases` });
    }
    const generated = generateRulePolicy(model, generatorContext, action === 'ALLOW');
    if (generated.kind === 'dropped') {
      reportProblem(generated.problem, action, true, selected, context);
      return;
    }
    const httpOnly = generated.ignored.filter((p) => p.failure.httpOnly);
    if (httpOnly.length > 0) reportWidened(httpOnly, `spec.rules[${index}]`, action, selected, context);
    for (const problem of generated.ignored) if (!problem.failure.httpOnly) reportProblem(problem, action, false, selected, context);
    out.push([name, generated.policy]);
  });
  return { source: selected, policies: out };
}

/** Removes repeated diagnostics (the HTTP and TCP passes see the same invalid values). */
export function dedupeDiagnostics(sink: DiagnosticSink): DiagnosticSink {
  const seen = new Set<string>();
  return sink.filter((d) => {
    const key = [d.code, d.severity, d.resource?.kind, d.resource?.namespace, d.resource?.name, d.path, d.message].join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
