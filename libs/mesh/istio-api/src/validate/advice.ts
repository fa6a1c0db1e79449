/**
 * ward's advisory checks: valid configurations that are known production accidents. Istio does
 * not report these; they are off unless asked for.
 */
import type { AuthorizationPolicy } from '../model/authorization-policy';
import type { SecurityResource } from '../model/resources';
import type { Findings } from './findings';

function checkSpiffePrefix(policy: AuthorizationPolicy, findings: Findings): void {
  (policy.spec.rules ?? []).forEach((rule, ruleIndex) => {
    (rule.from ?? []).forEach((from, fromIndex) => {
      for (const field of ['principals', 'notPrincipals'] as const) {
        (from.source?.[field] ?? []).forEach((value, index) => {
          if (!value.startsWith('spiffe://')) return;
          findings.warning(
            'ADVICE_SPIFFE_PREFIX',
            `${field} value ${JSON.stringify(value)} starts with spiffe://; Istio adds the prefix itself, so this never matches a peer identity (write ${JSON.stringify(value.slice('spiffe://'.length))})`,
            `spec.rules[${ruleIndex}].from[${fromIndex}].source.${field}[${index}]`,
          );
        });
      }
    });
  });
}

/** Adds ward's advisory findings for `resource`. */
export function adviseResource(resource: SecurityResource, findings: Findings): void {
  if (resource.kind !== 'AuthorizationPolicy') return;
  if (resource.spec.action === 'ALLOW' && resource.spec.rules === undefined) {
    findings.warning(
      'ADVICE_ALLOW_NOTHING',
      'ALLOW policy without rules allows nothing: every request to the selected workloads is denied (403 RBAC: access denied), and every TCP connection is closed',
      'spec',
    );
  }
  checkSpiffePrefix(resource, findings);
}
