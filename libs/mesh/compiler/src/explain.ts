// Plain-language explanations: what the compiled configuration of a workload does (including the
// well-known accidents: the ALLOW that denies everything else, the HTTP-only DENY that closes every
// TCP connection, dry-run, STRICT resetting plaintext callers) and why one simulated request got
// the outcome it got.
import type { HttpFilter, NetworkFilter, Permission, Policy, Principal, RBAC } from '@ward/mesh/envoy-api';
import { mtlsModeForPort } from './authn/peer-authentication';
import type { WorkloadConfig } from './compile-workload';
import type { SimulationResult } from './simulate/result';

/** Codes of explanation findings. */
export type FindingCode =
  | 'ALLOW_DENIES_UNMATCHED'
  | 'ALLOW_NOTHING'
  | 'TCP_DENY_MATCHES_ALL'
  | 'TCP_ALLOW_EMPTY'
  | 'DRY_RUN'
  | 'STRICT_RESETS_PLAINTEXT'
  | 'DISABLE_PLAINTEXT'
  | 'CUSTOM_EXT_AUTHZ';

/** One noteworthy property of a configuration. */
export interface Finding {
  readonly code: FindingCode;
  readonly message: string;
}

/** Structured facts plus the same as text lines. */
export interface Explanation {
  readonly findings: readonly Finding[];
  readonly lines: readonly string[];
}

function isAnyPermission(permission: Permission): boolean {
  if (permission.any === true) return true;
  if (permission.andRules !== undefined) return (permission.andRules.rules ?? []).every(isAnyPermission);
  if (permission.orRules !== undefined) return (permission.orRules.rules ?? []).some(isAnyPermission);
  return false;
}

function isAnyPrincipal(principal: Principal): boolean {
  if (principal.any === true) return true;
  if (principal.andIds !== undefined) return (principal.andIds.ids ?? []).every(isAnyPrincipal);
  if (principal.orIds !== undefined) return (principal.orIds.ids ?? []).some(isAnyPrincipal);
  return false;
}

/** True when a policy can never match (istiod's policy for an ALLOW without rules). */
export function matchesNothing(policy: Policy): boolean {
  return (policy.permissions ?? []).every((p) => p.notRule?.any === true) || (policy.principals ?? []).every((p) => p.notId?.any === true);
}

/** True when a policy matches every request or connection. */
export function matchesEverything(policy: Policy): boolean {
  return (policy.permissions ?? []).some(isAnyPermission) && (policy.principals ?? []).some(isAnyPrincipal);
}

interface RbacView {
  readonly rules?: RBAC;
  readonly shadowRules?: RBAC;
  readonly shadowRulesStatPrefix?: string;
}

function rbacOf(filter: HttpFilter | NetworkFilter): RbacView {
  return (filter.typedConfig ?? {}) as RbacView;
}

function filterFindings(config: WorkloadConfig): Finding[] {
  const findings: Finding[] = [];
  for (const filter of config.httpFilters) {
    const rbac = rbacOf(filter);
    if (rbac.rules !== undefined && (rbac.rules.action ?? 'ALLOW') === 'ALLOW' && (filter.name ?? '').endsWith('rbac')) {
      const policies = Object.values(rbac.rules.policies ?? {});
      if (policies.every(matchesNothing)) {
        findings.push({ code: 'ALLOW_NOTHING', message: 'ALLOW applies but no rule can match: every HTTP request is denied' });
      } else if (!policies.some(matchesEverything)) {
        findings.push({ code: 'ALLOW_DENIES_UNMATCHED', message: `ALLOW policies apply (${policies.length} rules): every HTTP request matching none of them gets 403 "RBAC: access denied"` });
      }
    }
    if (rbac.shadowRules !== undefined && rbac.shadowRulesStatPrefix !== undefined && rbac.shadowRulesStatPrefix.startsWith('istio_dry_run')) {
      findings.push({ code: 'DRY_RUN', message: `dry-run ${rbac.shadowRules.action ?? 'ALLOW'} rules are evaluated but not enforced; watch http.<stat_prefix>.rbac.${rbac.shadowRulesStatPrefix}shadow_denied / shadow_allowed` });
    }
    if (filter.name === 'envoy.filters.http.ext_authz') findings.push({ code: 'CUSTOM_EXT_AUTHZ', message: 'CUSTOM policies send matching requests to an external authorizer, before JWT validation and local RBAC' });
  }
  for (const filter of config.networkFilters) {
    const rbac = rbacOf(filter);
    const policies = Object.entries(rbac.rules?.policies ?? {});
    if (rbac.rules?.action === 'DENY') {
      const all = policies.filter(([, p]) => matchesEverything(p)).map(([n]) => n);
      if (all.length > 0) findings.push({ code: 'TCP_DENY_MATCHES_ALL', message: `DENY rule(s) ${all.join(', ')} match every TCP connection (their HTTP-only attributes do not exist on TCP): all TCP traffic to this workload is closed; restrict them with ports` });
    }
    if (rbac.rules !== undefined && (rbac.rules.action ?? 'ALLOW') === 'ALLOW' && policies.length === 0) {
      findings.push({ code: 'TCP_ALLOW_EMPTY', message: 'every ALLOW rule uses HTTP-only attributes, so the TCP filter allows nothing: all TCP connections are closed' });
    }
  }
  return findings;
}

function mtlsFindings(config: WorkloadConfig): Finding[] {
  const findings: Finding[] = [];
  const ports = [0, ...config.workload.ports.map((p) => p.port), ...config.mtls.perPort.map(([p]) => p)];
  const strict = [...new Set(ports.filter((p) => mtlsModeForPort(config.mtls, p) === 'STRICT'))];
  const disabled = [...new Set(ports.filter((p) => mtlsModeForPort(config.mtls, p) === 'DISABLE'))];
  const label = (p: number): string => (p === 0 ? 'undeclared ports' : String(p));
  if (strict.length > 0) findings.push({ code: 'STRICT_RESETS_PLAINTEXT', message: `STRICT on ${strict.map(label).join(', ')}: plaintext callers match no filter chain and are reset (listener no_filter_chain_match)` });
  if (disabled.length > 0) findings.push({ code: 'DISABLE_PLAINTEXT', message: `DISABLE on ${disabled.map(label).join(', ')}: only plaintext is accepted; callers sending mTLS there fail` });
  return findings;
}

function filterLines(config: WorkloadConfig): string[] {
  const lines: string[] = [];
  const describe = (kind: string, filters: ReadonlyArray<HttpFilter | NetworkFilter>): void => {
    if (filters.length === 0) lines.push(`${kind} authorization filters: none (everything is allowed)`);
    filters.forEach((filter, index) => {
      const rbac = rbacOf(filter);
      const enforced = rbac.rules === undefined ? '' : ` enforced ${rbac.rules.action ?? 'ALLOW'} [${Object.keys(rbac.rules.policies ?? {}).join(', ')}]`;
      const shadow = rbac.shadowRules === undefined ? '' : ` shadow ${rbac.shadowRules.action ?? 'ALLOW'} [${Object.keys(rbac.shadowRules.policies ?? {}).join(', ')}]`;
      lines.push(`${kind} filter ${index + 1}: ${filter.name}${enforced}${shadow}`);
    });
  };
  describe('HTTP', config.httpFilters);
  describe('TCP', config.networkFilters);
  return lines;
}

/** What the compiled configuration of a workload does. */
export function explainWorkload(config: WorkloadConfig): Explanation {
  const findings = [...filterFindings(config), ...mtlsFindings(config)];
  const mtlsLine = `mTLS: ${config.mtls.mode}${config.mtls.perPort.length > 0 ? ` (ports: ${config.mtls.perPort.map(([p, m]) => `${p}=${m}`).join(', ')})` : ''}`;
  const lines = [`workload ${config.workload.namespace}/${config.workload.name ?? ''}`, mtlsLine, ...filterLines(config), ...findings.map((f) => `! ${f.message}`)];
  return { findings, lines };
}

/** Why a simulated request or connection got its outcome. */
export function explainSimulation(result: SimulationResult): Explanation {
  const lines: string[] = [`outcome: ${result.outcome}`];
  const chain = result.chain;
  if (chain !== undefined) lines.push(`filter chain ${chain.index} "${chain.name}" (${chain.kind}, ${chain.mtls ? 'mTLS terminated' : 'no mTLS termination'}, transport ${result.detected.transportProtocol})`);
  if (result.peerPrincipal !== undefined) lines.push(`peer principal: ${result.peerPrincipal}`);
  for (const filter of result.filters) {
    const parts = [`filter ${filter.index} ${filter.name}`];
    if (filter.shadow !== undefined) parts.push(`shadow ${filter.shadow.allowed ? 'allowed' : 'denied'}${filter.shadow.matchedPolicy !== undefined ? ` by ${filter.shadow.matchedPolicy}` : ''}`);
    if (filter.enforced !== undefined) parts.push(`${filter.action ?? ''} ${filter.enforced.allowed ? 'allowed' : 'denied'}${filter.enforced.matchedPolicy !== undefined ? ` (matched ${filter.enforced.matchedPolicy})` : ' (no policy matched)'}`);
    if (filter.extAuthz !== undefined) parts.push(filter.extAuthz.enabled ? `external authorizer said ${filter.extAuthz.decision ?? '?'}` : 'not enabled (no CUSTOM rule matched)');
    lines.push(parts.join(': '));
  }
  lines.push(`decided by: ${result.decision.filterName ?? 'listener'}${result.decision.policy !== undefined ? ` / ${result.decision.policy}` : ''} — ${result.decision.reason}`);
  if (result.httpResponse !== undefined) lines.push(`response: ${result.httpResponse.status} "${result.httpResponse.body}" (${result.httpResponse.responseCodeDetails})`);
  if (result.connectionTerminationDetails !== undefined) lines.push(`connection closed: ${result.connectionTerminationDetails}`);
  lines.push(`stats: ${result.stats.join(', ') || 'none'}`);
  return { findings: [], lines };
}
