// The simulator's first RBAC engine, which interprets the Envoy config on every request. The
// simulator now runs configs compiled into predicates (src/simulate/compiled-rbac.ts); this
// interpreter stays as the reference the compiled engine is checked against.
import type { Permission, Policy, Principal, RBAC } from '@ward/mesh/envoy-api';
import { assert } from '@ward/shared/errors';
import { cidrContains, parseCidr, CidrParseError, type IpAddress, type ParsedCidr } from '../src/authz/cidr';
import { compareBytewise } from '../src/simulate/byte-order';
import { SimulatorError } from '../src/simulate/errors';
import { matchHeader, matchMetadata, matchString } from '../src/simulate/matchers';
import type { EngineResult, RbacAttributes } from '../src/simulate/rbac-engine';
import { matchUriTemplate } from '../src/simulate/uri-template';

/** Bound on nesting while evaluating (Envoy configs from istiod stay tiny). */
const MAX_DEPTH = 64;

const MAX_CACHED_RANGES = 4_096;
const parsedRanges = new Map<string, ParsedCidr>();

function inCidr(range: { addressPrefix?: string; prefixLen?: number }, address: IpAddress): boolean {
  const text = `${range.addressPrefix ?? ''}/${range.prefixLen ?? 0}`;
  let parsed = parsedRanges.get(text);
  if (parsed === undefined) {
    const fresh = parseCidr(text);
    if (fresh instanceof CidrParseError) throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'bad CIDR range in config', JSON.stringify(range));
    if (parsedRanges.size >= MAX_CACHED_RANGES) parsedRanges.clear();
    parsedRanges.set(text, fresh);
    parsed = fresh;
  }
  return cidrContains(parsed, address);
}

/** `Principal.authenticated`: URI SANs, then DNS SANs, then the subject; plaintext never matches. */
function matchAuthenticated(principal: Principal['authenticated'], attributes: RbacAttributes): boolean {
  const certificate = attributes.peerCertificate;
  if (certificate === undefined) return false;
  const name = principal?.principalName;
  if (name === undefined) return true;
  if (certificate.uriSans.length > 0) return certificate.uriSans.some((san) => matchString(name, san));
  if (certificate.dnsSans.length > 0) return certificate.dnsSans.some((san) => matchString(name, san));
  return matchString(name, certificate.subject);
}

/** True when `permission` matches. */
export function matchPermission(permission: Permission, attributes: RbacAttributes, depth = 0): boolean {
  assert(depth <= MAX_DEPTH, 'permission nesting within limit');
  if (permission.any === true) return true;
  if (permission.andRules !== undefined) return (permission.andRules.rules ?? []).every((p) => matchPermission(p, attributes, depth + 1));
  if (permission.orRules !== undefined) return (permission.orRules.rules ?? []).some((p) => matchPermission(p, attributes, depth + 1));
  if (permission.notRule !== undefined) return !matchPermission(permission.notRule, attributes, depth + 1);
  if (permission.header !== undefined) return matchHeader(permission.header, attributes.headers);
  if (permission.urlPath !== undefined) {
    return attributes.urlPath !== undefined && permission.urlPath.path !== undefined && matchString(permission.urlPath.path, attributes.urlPath);
  }
  if (permission.destinationIp !== undefined) return inCidr(permission.destinationIp, attributes.destinationIp);
  if (permission.destinationPort !== undefined) return attributes.destinationPort === permission.destinationPort;
  if (permission.destinationPortRange !== undefined) {
    const { start = 0, end = 0 } = permission.destinationPortRange;
    return attributes.destinationPort >= start && attributes.destinationPort < end;
  }
  if (permission.metadata !== undefined) return matchMetadata(permission.metadata, attributes.metadata);
  if (permission.requestedServerName !== undefined) return matchString(permission.requestedServerName, attributes.requestedServerName);
  if (permission.uriTemplate !== undefined) {
    const template = (permission.uriTemplate.typedConfig as { pathTemplate?: unknown } | undefined)?.pathTemplate;
    if (typeof template !== 'string') throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'uri_template without pathTemplate', JSON.stringify(permission.uriTemplate));
    return attributes.urlPath !== undefined && matchUriTemplate(template, attributes.urlPath);
  }
  throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'permission of a kind the simulator does not evaluate', JSON.stringify(permission));
}

/** True when `principal` matches. */
export function matchPrincipal(principal: Principal, attributes: RbacAttributes, depth = 0): boolean {
  assert(depth <= MAX_DEPTH, 'principal nesting within limit');
  if (principal.any === true) return true;
  if (principal.andIds !== undefined) return (principal.andIds.ids ?? []).every((p) => matchPrincipal(p, attributes, depth + 1));
  if (principal.orIds !== undefined) return (principal.orIds.ids ?? []).some((p) => matchPrincipal(p, attributes, depth + 1));
  if (principal.notId !== undefined) return !matchPrincipal(principal.notId, attributes, depth + 1);
  if (principal.authenticated !== undefined) return matchAuthenticated(principal.authenticated, attributes);
  if (principal.directRemoteIp !== undefined) return inCidr(principal.directRemoteIp, attributes.directRemoteIp);
  if (principal.sourceIp !== undefined) return inCidr(principal.sourceIp, attributes.directRemoteIp);
  if (principal.remoteIp !== undefined) return inCidr(principal.remoteIp, attributes.remoteIp);
  if (principal.header !== undefined) return matchHeader(principal.header, attributes.headers);
  if (principal.urlPath !== undefined) {
    return attributes.urlPath !== undefined && principal.urlPath.path !== undefined && matchString(principal.urlPath.path, attributes.urlPath);
  }
  if (principal.metadata !== undefined) return matchMetadata(principal.metadata, attributes.metadata);
  if (principal.filterState !== undefined) {
    const value = principal.filterState.key === 'io.istio.peer_principal' ? attributes.peerPrincipalFilterState : undefined;
    return value !== undefined && principal.filterState.stringMatch !== undefined && matchString(principal.filterState.stringMatch, value);
  }
  throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'principal of a kind the simulator does not evaluate', JSON.stringify(principal));
}

/** A policy matches when some permission and some principal match. */
export function matchPolicy(policy: Policy, attributes: RbacAttributes): boolean {
  return (policy.permissions ?? []).some((p) => matchPermission(p, attributes)) && (policy.principals ?? []).some((p) => matchPrincipal(p, attributes));
}

const sortedNames = new WeakMap<RBAC, readonly string[]>();

function policyNamesInOrder(rbac: RBAC): readonly string[] {
  let names = sortedNames.get(rbac);
  if (names === undefined) {
    names = Object.keys(rbac.policies ?? {}).sort(compareBytewise);
    sortedNames.set(rbac, names);
  }
  return names;
}

/** The interpreted engine: first matching policy in byte order decides. */
export function evaluateRbacInterpreted(rbac: RBAC, attributes: RbacAttributes): EngineResult {
  const action = rbac.action ?? 'ALLOW';
  const names = policyNamesInOrder(rbac);
  const matchedPolicy = names.find((name) => {
    const policy = rbac.policies?.[name];
    return policy !== undefined && matchPolicy(policy, attributes);
  });
  const matched = matchedPolicy !== undefined;
  const allowed = action === 'LOG' ? true : action === 'ALLOW' ? matched : !matched;
  return { action, allowed, ...(matched ? { matchedPolicy } : {}) };
}

