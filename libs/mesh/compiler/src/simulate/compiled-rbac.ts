// Envoy's RBAC engine on a config compiled once into predicate trees (as grpc-js-xds's rbac.ts
// parses its config into rule objects): policies pre-sorted in byte order of their names, CIDR
// ranges parsed, matchers compiled. Evaluating a request walks closures only. Constructs the
// simulator cannot evaluate become predicates that throw a SimulatorError when reached, which is
// where the interpreted engine refused them.
//
// Identical leaf matchers (`:method` exact GET, a principal regex, a path prefix, ...) repeat
// across the rules of a workload; an `RbacCompiler` interns them, and one evaluation pass (one
// request through every filter of a chain) computes each leaf at most once (rule-program.ts).
// Metadata leaves are never memoized: RBAC filters write dynamic metadata as the request passes.
import type { Permission, Policy, Principal, RBAC, StringMatcher } from '@ward/mesh/envoy-api';
import { CidrParseError, cidrContains, parseCidr } from '../authz/cidr';
import { compileHeaderMatcher, compileMetadataMatcher, compileStringMatcher, refusing } from './compiled-matchers';
import { SimulatorError } from './errors';
import type { EngineResult, RbacAttributes } from './rbac-engine';
import { compareBytewise } from './byte-order';
import { uriTemplateRegex } from './uri-template';
import { fullMatchRegex } from './regex';
import { RbacCompiler, RuleNode, emitProgram, runProgram, type LeafMemo, type RuleProgram } from './rule-program';

/** An RBAC message ready to evaluate. */
export interface CompiledRbac {
  readonly action: 'ALLOW' | 'DENY' | 'LOG';
  /** Policy names in byte order: the first match decides. */
  readonly names: readonly string[];
  /** Per policy i: `roots[2i]` its permissions, `roots[2i+1]` its principals (offsets in `program`). */
  readonly roots: Int32Array;
  readonly program: RuleProgram;
  /** The compiler whose leaf table the program uses (memos come from it). */
  readonly compiler: RbacCompiler;
}

/** Bound on nesting (Envoy configs from istiod stay tiny; a deeper tree is refused when reached). */
const MAX_DEPTH = 64;

function unsupported(message: string, subject: unknown): RuleNode {
  return RuleNode.direct(refusing(new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', message, JSON.stringify(subject))));
}

/** A refused construct that the interpreted engine reached only behind `guard`. */
function refusingLeaf(error: SimulatorError, guard: (attributes: RbacAttributes) => boolean): RuleNode {
  const refuse = refusing(error);
  return RuleNode.direct((attributes) => guard(attributes) && refuse());
}

function stringLeaf(compiler: RbacCompiler, key: string, matcher: StringMatcher, read: (attributes: RbacAttributes) => string | undefined): RuleNode {
  return compiler.leaf(`${key}:${JSON.stringify(matcher)}`, () => {
    const test = compileStringMatcher(matcher);
    return (attributes) => {
      const value = read(attributes);
      return value !== undefined && test(value);
    };
  });
}

function cidrLeaf(compiler: RbacCompiler, key: 'dst' | 'direct' | 'remote', range: { addressPrefix?: string; prefixLen?: number }): RuleNode {
  const parsed = parseCidr(`${range.addressPrefix ?? ''}/${range.prefixLen ?? 0}`);
  if (parsed instanceof CidrParseError) return unsupported('bad CIDR range in config', range);
  return compiler.leaf(`${key}:${String(range.addressPrefix)}/${String(range.prefixLen)}`, () => {
    if (key === 'dst') return (attributes) => cidrContains(parsed, attributes.destinationIp);
    return key === 'direct' ? (attributes) => cidrContains(parsed, attributes.directRemoteIp) : (attributes) => cidrContains(parsed, attributes.remoteIp);
  });
}

function headerLeaf(compiler: RbacCompiler, matcher: NonNullable<Permission['header']>): RuleNode {
  return compiler.leaf(`header:${JSON.stringify(matcher)}`, () => {
    const test = compileHeaderMatcher(matcher);
    return (attributes) => test(attributes.headers);
  });
}

/** Never memoized: RBAC filters write dynamic metadata while the request passes. */
function metadataLeaf(matcher: NonNullable<Permission['metadata']>): RuleNode {
  const test = compileMetadataMatcher(matcher);
  return RuleNode.direct((attributes) => test(attributes.metadata));
}

function urlPathLeaf(compiler: RbacCompiler, matcher: StringMatcher | undefined): RuleNode {
  if (matcher === undefined) return RuleNode.FALSE;
  return stringLeaf(compiler, 'url_path', matcher, (attributes) => attributes.urlPath);
}

function uriTemplateLeaf(compiler: RbacCompiler, permission: NonNullable<Permission['uriTemplate']>): RuleNode {
  const template = (permission.typedConfig as { pathTemplate?: unknown } | undefined)?.pathTemplate;
  if (typeof template !== 'string') return unsupported('uri_template without pathTemplate', permission);
  let regex: RegExp;
  try {
    regex = fullMatchRegex(uriTemplateRegex(template));
  } catch (error) {
    if (!(error instanceof SimulatorError)) throw error;
    return refusingLeaf(error, (attributes) => attributes.urlPath !== undefined);
  }
  return compiler.leaf(`uri_template:${template}`, () => (attributes) => attributes.urlPath !== undefined && regex.test(attributes.urlPath));
}

/** `Principal.authenticated`: URI SANs, then DNS SANs, then the subject; plaintext never matches. */
function authenticatedLeaf(compiler: RbacCompiler, principal: NonNullable<Principal['authenticated']>): RuleNode {
  const name = principal.principalName;
  return compiler.leaf(`authenticated:${JSON.stringify(name ?? null)}`, () => {
    const test = name === undefined ? undefined : compileStringMatcher(name);
    return (attributes) => {
      const certificate = attributes.peerCertificate;
      if (certificate === undefined) return false;
      if (test === undefined) return true;
      if (certificate.uriSans.length > 0) return certificate.uriSans.some(test);
      if (certificate.dnsSans.length > 0) return certificate.dnsSans.some(test);
      return test(certificate.subject);
    };
  });
}

function filterStateLeaf(compiler: RbacCompiler, principal: NonNullable<Principal['filterState']>): RuleNode {
  if (principal.key !== 'io.istio.peer_principal' || principal.stringMatch === undefined) return RuleNode.FALSE;
  return stringLeaf(compiler, 'peer_principal', principal.stringMatch, (attributes) => attributes.peerPrincipalFilterState);
}

function portLeaf(compiler: RbacCompiler, start: number, end: number): RuleNode {
  return compiler.leaf(`port:${start}-${end}`, () => (attributes) => attributes.destinationPort >= start && attributes.destinationPort < end);
}

/** Compiles a `Permission`. */
export function compilePermission(compiler: RbacCompiler, permission: Permission, depth = 0): RuleNode {
  if (depth > MAX_DEPTH) return unsupported('permission nesting deeper than the limit', '…');
  if (permission.any === true) return RuleNode.TRUE;
  if (permission.andRules !== undefined) return RuleNode.and((permission.andRules.rules ?? []).map((p) => compilePermission(compiler, p, depth + 1)));
  if (permission.orRules !== undefined) return RuleNode.or((permission.orRules.rules ?? []).map((p) => compilePermission(compiler, p, depth + 1)));
  if (permission.notRule !== undefined) return RuleNode.not(compilePermission(compiler, permission.notRule, depth + 1));
  if (permission.header !== undefined) return headerLeaf(compiler, permission.header);
  if (permission.urlPath !== undefined) return urlPathLeaf(compiler, permission.urlPath.path);
  if (permission.destinationIp !== undefined) return cidrLeaf(compiler, 'dst', permission.destinationIp);
  if (permission.destinationPort !== undefined) return portLeaf(compiler, permission.destinationPort, permission.destinationPort + 1);
  if (permission.destinationPortRange !== undefined) return portLeaf(compiler, permission.destinationPortRange.start ?? 0, permission.destinationPortRange.end ?? 0);
  if (permission.metadata !== undefined) return metadataLeaf(permission.metadata);
  if (permission.requestedServerName !== undefined) return stringLeaf(compiler, 'sni', permission.requestedServerName, (attributes) => attributes.requestedServerName);
  if (permission.uriTemplate !== undefined) return uriTemplateLeaf(compiler, permission.uriTemplate);
  return unsupported('permission of a kind the simulator does not evaluate', permission);
}

/** Compiles a `Principal`. */
export function compilePrincipal(compiler: RbacCompiler, principal: Principal, depth = 0): RuleNode {
  if (depth > MAX_DEPTH) return unsupported('principal nesting deeper than the limit', '…');
  if (principal.any === true) return RuleNode.TRUE;
  if (principal.andIds !== undefined) return RuleNode.and((principal.andIds.ids ?? []).map((p) => compilePrincipal(compiler, p, depth + 1)));
  if (principal.orIds !== undefined) return RuleNode.or((principal.orIds.ids ?? []).map((p) => compilePrincipal(compiler, p, depth + 1)));
  if (principal.notId !== undefined) return RuleNode.not(compilePrincipal(compiler, principal.notId, depth + 1));
  if (principal.authenticated !== undefined) return authenticatedLeaf(compiler, principal.authenticated);
  if (principal.directRemoteIp !== undefined) return cidrLeaf(compiler, 'direct', principal.directRemoteIp);
  if (principal.sourceIp !== undefined) return cidrLeaf(compiler, 'direct', principal.sourceIp);
  if (principal.remoteIp !== undefined) return cidrLeaf(compiler, 'remote', principal.remoteIp);
  if (principal.header !== undefined) return headerLeaf(compiler, principal.header);
  if (principal.urlPath !== undefined) return urlPathLeaf(compiler, principal.urlPath.path);
  if (principal.metadata !== undefined) return metadataLeaf(principal.metadata);
  if (principal.filterState !== undefined) return filterStateLeaf(compiler, principal.filterState);
  return unsupported('principal of a kind the simulator does not evaluate', principal);
}

/** Compiles an RBAC message: policies sorted by name as bytes (Envoy's std::map order). */
export function compileRbac(rbac: RBAC, compiler: RbacCompiler = new RbacCompiler()): CompiledRbac {
  const policies = rbac.policies ?? {};
  const names = Object.keys(policies).sort(compareBytewise);
  const trees: RuleNode[] = [];
  for (const name of names) {
    const policy = policies[name] as Policy;
    const permissions = (policy.permissions ?? []).map((p) => compilePermission(compiler, p));
    const principals = (policy.principals ?? []).map((p) => compilePrincipal(compiler, p));
    // No permission or no principal: the policy never matches (and its other side is never evaluated).
    if (permissions.length === 0 || principals.length === 0) trees.push(RuleNode.FALSE, RuleNode.FALSE);
    else trees.push(RuleNode.or(permissions), RuleNode.or(principals));
  }
  const { program, offsets } = emitProgram(trees);
  return { action: rbac.action ?? 'ALLOW', names, roots: Int32Array.from(offsets), program, compiler };
}

const NOT_MATCHED_ALLOW: EngineResult = Object.freeze({ action: 'ALLOW', allowed: false });
const NOT_MATCHED_DENY: EngineResult = Object.freeze({ action: 'DENY', allowed: true });
const NOT_MATCHED_LOG: EngineResult = Object.freeze({ action: 'LOG', allowed: true });

/**
 * Evaluates a compiled engine: the first matching policy in byte order decides. `memo` carries
 * leaf results between the engines of one pass (same compiler); a fresh one is used otherwise.
 */
export function evaluateCompiledRbac(engine: CompiledRbac, attributes: RbacAttributes, memo: LeafMemo = engine.compiler.newMemo()): EngineResult {
  const { action, roots, program } = engine;
  const tests = engine.compiler.tests;
  for (let i = 0; i < roots.length; i += 2) {
    if (runProgram(program, roots[i] as number, attributes, memo, tests) && runProgram(program, roots[i + 1] as number, attributes, memo, tests)) {
      return { action, allowed: action !== 'ALLOW' ? action === 'LOG' : true, matchedPolicy: engine.names[i >> 1] as string };
    }
  }
  return action === 'ALLOW' ? NOT_MATCHED_ALLOW : action === 'DENY' ? NOT_MATCHED_DENY : NOT_MATCHED_LOG;
}
