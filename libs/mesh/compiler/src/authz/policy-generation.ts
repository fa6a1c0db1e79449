// A rule model → one Envoy RBAC `Policy` for one filter type (HTTP or TCP) and action.
// ALLOW: any value that cannot be generated drops the whole rule (the allow set shrinks).
// DENY, AUDIT and CUSTOM: such a value is left out (the rule widens); istiod does the same.
import type { Permission, Policy, Principal } from '@ward/mesh/envoy-api';
import { assert } from '@ward/shared/errors';
import {
  generateExtendedPermission,
  generateExtendedPrincipal,
  generatePermission,
  generatePrincipal,
  isFailure,
  type GenerationFailure,
  type GeneratorContext,
} from './generators';
import type { AttributeEntry, RuleModel } from './rule-model';

/** A value left out of a DENY/AUDIT/CUSTOM rule, or the value that dropped an ALLOW rule. */
export interface GenerationProblem {
  readonly path: string;
  readonly value: string;
  readonly failure: GenerationFailure;
}

/** Result of generating one rule. */
export type RuleGeneration =
  | { readonly kind: 'generated'; readonly policy: Policy; readonly ignored: readonly GenerationProblem[] }
  | { readonly kind: 'dropped'; readonly problem: GenerationProblem };

/** The policy matching nothing, emitted for a policy without rules. */
export const MATCH_NEVER_POLICY: Policy = Object.freeze({
  permissions: [{ notRule: { any: true } }],
  principals: [{ notId: { any: true } }],
});

/** Thrown inside one rule's generation to abort it (ALLOW only); never escapes this module. */
class DropRule {
  constructor(readonly problem: GenerationProblem) {}
}

interface Collector {
  readonly strict: boolean; // ALLOW
  readonly ignored: GenerationProblem[];
}

function keep<T>(result: T | GenerationFailure, path: string, value: string, collector: Collector): T | undefined {
  if (!isFailure(result)) return result;
  const problem = { path, value, failure: result };
  if (collector.strict) throw new DropRule(problem);
  collector.ignored.push(problem);
  return undefined;
}

function entryPermissions(e: AttributeEntry, context: GeneratorContext, collector: Collector): Permission[] {
  const out: Permission[] = [];
  if (e.extended) {
    if (e.values.length > 0) {
      const made = keep(generateExtendedPermission(e.kind, e.key, e.values, context), e.valuesPath, e.values.join(','), collector);
      if (made !== undefined) out.push(made);
    }
    if (e.notValues.length > 0) {
      const made = keep(generateExtendedPermission(e.kind, e.key, e.notValues, context), e.notValuesPath, e.notValues.join(','), collector);
      if (made !== undefined) out.push({ notRule: made });
    }
    return out;
  }
  const positive = e.values.flatMap((v, i) => keep(generatePermission(e.kind, e.key, v, context), `${e.valuesPath}[${i}]`, v, collector) ?? []);
  if (positive.length > 0) out.push({ orRules: { rules: positive } });
  const negative = e.notValues.flatMap((v, i) => keep(generatePermission(e.kind, e.key, v, context), `${e.notValuesPath}[${i}]`, v, collector) ?? []);
  if (negative.length > 0) out.push({ notRule: { orRules: { rules: negative } } });
  return out;
}

function entryPrincipals(e: AttributeEntry, context: GeneratorContext, collector: Collector): Principal[] {
  const out: Principal[] = [];
  if (e.extended) {
    if (e.values.length > 0) {
      const made = keep(generateExtendedPrincipal(e.kind, e.key, e.values, context), e.valuesPath, e.values.join(','), collector);
      if (made !== undefined) out.push(made);
    }
    if (e.notValues.length > 0) {
      const made = keep(generateExtendedPrincipal(e.kind, e.key, e.notValues, context), e.notValuesPath, e.notValues.join(','), collector);
      if (made !== undefined) out.push({ notId: made });
    }
    return out;
  }
  const positive = e.values.flatMap((v, i) => keep(generatePrincipal(e.kind, e.key, v, context), `${e.valuesPath}[${i}]`, v, collector) ?? []);
  if (positive.length > 0) out.push({ orIds: { ids: positive } });
  const negative = e.notValues.flatMap((v, i) => keep(generatePrincipal(e.kind, e.key, v, context), `${e.notValuesPath}[${i}]`, v, collector) ?? []);
  if (negative.length > 0) out.push({ notId: { orIds: { ids: negative } } });
  return out;
}

/** Generates the Envoy policy of one rule model. */
export function generateRulePolicy(model: RuleModel, context: GeneratorContext, strict: boolean): RuleGeneration {
  const collector: Collector = { strict, ignored: [] };
  try {
    const permissions: Permission[] = model.permissions.map((list) => {
      const and = list.flatMap((e) => entryPermissions(e, context, collector));
      return { andRules: { rules: and.length > 0 ? and : [{ any: true }] } };
    });
    const principals: Principal[] = model.principals.map((list) => {
      const and = list.flatMap((e) => entryPrincipals(e, context, collector));
      return { andIds: { ids: and.length > 0 ? and : [{ any: true }] } };
    });
    assert(permissions.length > 0 && principals.length > 0, 'a rule model has at least one permission and one principal list');
    return { kind: 'generated', policy: { permissions, principals }, ignored: collector.ignored };
  } catch (error) {
    if (error instanceof DropRule) return { kind: 'dropped', problem: error.problem };
    throw error;
  }
}
