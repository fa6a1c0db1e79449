/** `ValidateAuthorizationPolicy`: istiod's webhook checks for an AuthorizationPolicy, in its order. */
import type { AuthorizationPolicy } from '../model/authorization-policy';
import { validateRule } from './authorization-policy-rules';
import type { Findings } from './findings';
import { validateOneOfSelectorType, validatePolicyTargetReference, validateWorkloadSelector } from './selector-and-targets';

const CUSTOM_SOURCE_FIELDS = [
  ['From.Namespaces', 'namespaces'], ['From.NotNamespaces', 'notNamespaces'],
  ['From.ServiceAccounts', 'serviceAccounts'], ['From.NotServiceAccounts', 'notServiceAccounts'],
  ['From.TrustDomains', 'trustDomains'], ['From.NotTrustDomains', 'notTrustDomains'],
  ['From.Principals', 'principals'], ['From.NotPrincipals', 'notPrincipals'],
  ['From.RequestPrincipals', 'requestPrincipals'], ['From.NotRequestPrincipals', 'notRequestPrincipals'],
] as const;

const CUSTOM_WHEN_KEYS = ['source.namespace', 'source.serviceAccount', 'source.trustDomain', 'source.principal'];

function unsupportedWithCustom(name: string): string {
  return `${name} is currently not supported with CUSTOM action`;
}

function validateCustom(policy: AuthorizationPolicy, findings: Findings): void {
  const spec = policy.spec;
  if (spec.rules === undefined) {
    findings.error(
      'AP_CUSTOM_WITHOUT_RULES',
      'CUSTOM action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request',
      'spec',
    );
  } else if (spec.provider === undefined || spec.provider.name === '') {
    findings.error('AP_CUSTOM_PROVIDER_NAME_EMPTY', '`provider.name` must not be empty', 'spec.provider');
  }
  (spec.rules ?? []).forEach((rule, ruleIndex) => {
    (rule.from ?? []).forEach((from, fromIndex) => {
      const source = from.source;
      if (source === undefined) return;
      for (const [name, field] of CUSTOM_SOURCE_FIELDS) {
        if (source[field] !== undefined) {
          findings.error('AP_CUSTOM_UNSUPPORTED_ATTRIBUTE', unsupportedWithCustom(name), `spec.rules[${ruleIndex}].from[${fromIndex}].source.${field}`);
        }
      }
    });
    (rule.when ?? []).forEach((condition, whenIndex) => {
      if (CUSTOM_WHEN_KEYS.includes(condition.key) || condition.key.startsWith('request.auth.')) {
        findings.error('AP_CUSTOM_UNSUPPORTED_ATTRIBUTE', unsupportedWithCustom(condition.key), `spec.rules[${ruleIndex}].when[${whenIndex}].key`);
      }
    });
  });
}

/** Adds istiod's errors and warnings for `policy` to `findings`. */
export function validateAuthorizationPolicy(policy: AuthorizationPolicy, findings: Findings): void {
  const spec = policy.spec;
  validateOneOfSelectorType(spec.selector, spec.targetRef, spec.targetRefs, findings);
  validateWorkloadSelector(spec.selector, findings);
  validatePolicyTargetReference(spec.targetRef, 'spec.targetRef', findings);
  (spec.targetRefs ?? []).forEach((ref, index) => validatePolicyTargetReference(ref, `spec.targetRefs[${index}]`, findings));
  if (spec.action === 'CUSTOM') validateCustom(policy, findings);
  if (spec.provider !== undefined && spec.action !== 'CUSTOM') {
    findings.error('AP_PROVIDER_WITHOUT_CUSTOM', `\`provider\` must not be with non CUSTOM action, found ${spec.action}`, 'spec.provider');
  }
  if (spec.action === 'DENY' && spec.rules === undefined) {
    findings.error(
      'AP_DENY_WITHOUT_RULES',
      'DENY action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request',
      'spec',
    );
  }
  (spec.rules ?? []).forEach((rule, index) => validateRule(rule, index, spec.action === 'DENY', findings));
}
