// One value (or, for "extended" attributes, one value list) → one Envoy permission or principal,
// exactly as istiod's generators build them (spec §1.4, §1.4.4).
import type { MetadataMatcher, Permission, Principal, StringMatcher, ValueMatcher } from '@ward/mesh/envoy-api';
import { TYPE_URLS, FILTER_NAMES } from '@ward/mesh/envoy-api';
import { assertNever } from '@ward/shared/errors';
import { HTTP_ONLY_KINDS, type AttributeKind } from './attributes';
import { CidrParseError, cidrRange } from './cidr';
import {
  SPIFFE_PREFIX,
  containsPathTemplate,
  exactMatcher,
  headerMatcher,
  pathMatcher,
  prefixMatcher,
  quoteMeta,
  regexMatcher,
  stringMatcher,
  stringMatcherWithPrefix,
  suffixMatcher,
  uriTemplateConfig,
} from './string-matchers';

/** The JWT filter whose dynamic metadata the request-principal and claim matchers read. */
export const JWT_FILTER_NAME = 'envoy.filters.http.jwt_authn';
const JWT_PAYLOAD = 'payload';
/** Filter-state key of the peer identity on waypoints and HBONE chains. */
export const PEER_PRINCIPAL_FILTER_STATE = 'io.istio.peer_principal';

/** Why a value could not be generated. `httpOnly` marks the expected TCP case. */
export interface GenerationFailure {
  readonly failure: true;
  readonly message: string;
  readonly httpOnly: boolean;
}

/** Per-rule facts the generators need. */
export interface GeneratorContext {
  readonly forTcp: boolean;
  /** Namespace of the policy: the default for a bare `serviceAccounts` value. */
  readonly policyNamespace: string;
  /** Principals as `filterState` (waypoint/HBONE) instead of `authenticated`. */
  readonly useFilterState: boolean;
}

export function isFailure(value: unknown): value is GenerationFailure {
  return typeof value === 'object' && value !== null && (value as { failure?: unknown }).failure === true;
}

function failure(message: string, httpOnly = false): GenerationFailure {
  return { failure: true, message, httpOnly };
}

function httpOnlyFailure(kind: AttributeKind, key: string, context: GeneratorContext): GenerationFailure | undefined {
  return context.forTcp && HTTP_ONLY_KINDS.has(kind) ? failure(`"${key}" is HTTP only`, true) : undefined;
}

function authenticated(matcher: StringMatcher, context: GeneratorContext): Principal {
  return context.useFilterState
    ? { filterState: { key: PEER_PRINCIPAL_FILTER_STATE, stringMatch: matcher } }
    : { authenticated: { principalName: matcher } };
}

/** Go `strconv.ParseUint(v, 10, 32)` limited to 65535. */
export function parsePortValue(value: string): number | undefined {
  if (!/^\d{1,10}$/u.test(value)) return undefined;
  const port = Number(value);
  return port <= 65535 ? port : undefined;
}

function namespaceRegex(value: string): string {
  return `.*/ns/${value.split('*').map(quoteMeta).join('.*')}/.*`;
}

/** `spiffe://.+/ns/<ns>/(.+/|)sa/<sa>(/.+)?`; a bare `sa` means the policy's namespace. */
export function serviceAccountRegex(defaultNamespace: string, value: string): string {
  const slash = value.indexOf('/');
  const namespace = slash < 0 ? defaultNamespace : value.slice(0, slash);
  const account = slash < 0 ? value : value.slice(slash + 1);
  return `spiffe://.+/ns/${quoteMeta(namespace)}/(.+/|)sa/${quoteMeta(account)}(/.+)?`;
}

function trustDomainMatcher(value: string): StringMatcher {
  if (value === '*') return prefixMatcher(SPIFFE_PREFIX);
  const star = value.indexOf('*');
  if (star < 0) return prefixMatcher(`${SPIFFE_PREFIX}${value}/`);
  return regexMatcher(`${SPIFFE_PREFIX}${quoteMeta(value.slice(0, star))}[^/]*${quoteMeta(value.slice(star + 1))}/.*`);
}

/** The `[name]` of `request.headers[name]`. */
function nameInBrackets(suffix: string): string | GenerationFailure {
  if (!suffix.startsWith('[') || !suffix.endsWith(']')) return failure(`expecting format [<NAME>], but found ${suffix}`);
  return suffix.slice(1, -1);
}

/** Envoy rejects (and NACKs the whole listener for) empty names and names with NUL, CR or LF. */
function envoyRejectsName(name: string): GenerationFailure | undefined {
  return name === '' || /[\0\r\n]/u.test(name) ? failure(`name ${JSON.stringify(name)} would be rejected by Envoy`) : undefined;
}

/** Longest path template Envoy accepts. */
const MAX_PATH_TEMPLATE_LENGTH = 256;

/** `[a][b]` → `[a, b]`; an irregular bracket structure is one name (`[a.b]` → `a.b`). */
export function namesInNestedBrackets(suffix: string): string[] | GenerationFailure {
  const names: string[] = [];
  const endBracket = (begin: number): number => {
    if (begin >= suffix.length || suffix[begin] !== '[') return -1;
    for (let i = begin + 1; i < suffix.length; i++) {
      if (suffix[i] === '[') return -1;
      if (suffix[i] === ']') return i;
    }
    return -1;
  };
  for (let begin = 0; begin < suffix.length; ) {
    const end = endBracket(begin);
    if (end < 0) {
      const single = nameInBrackets(suffix);
      return isFailure(single) ? single : [single];
    }
    names.push(suffix.slice(begin + 1, end));
    begin = end + 1;
  }
  return names;
}

/** Permission for one value of a standard permission-side attribute. */
export function generatePermission(kind: AttributeKind, key: string, value: string, context: GeneratorContext): Permission | GenerationFailure {
  const httpOnly = httpOnlyFailure(kind, key, context);
  if (httpOnly !== undefined) return httpOnly;
  switch (kind) {
    case 'destination.ip': {
      const range = cidrRange(value);
      return range instanceof CidrParseError ? failure(range.message) : { destinationIp: range };
    }
    case 'destination.port': {
      const port = parsePortValue(value);
      return port === undefined ? failure(`invalid port ${value}`) : { destinationPort: port };
    }
    case 'connection.sni':
      return { requestedServerName: stringMatcher(value) };
    case 'hosts':
      return { header: headerMatcher(':authority', value, true) };
    case 'methods':
      return { header: headerMatcher(':method', value, false) };
    case 'paths': {
      if (!containsPathTemplate(value)) return { urlPath: pathMatcher(value) };
      const template = uriTemplateConfig(value);
      if ((template.pathTemplate ?? '').length > MAX_PATH_TEMPLATE_LENGTH) return failure(`path template longer than ${MAX_PATH_TEMPLATE_LENGTH} characters would be rejected by Envoy`);
      return { uriTemplate: { name: FILTER_NAMES.uriTemplate, typedConfig: { '@type': TYPE_URLS.uriTemplateMatch, ...template } } };
    }
    default:
      return failure(`${kind} is not a permission attribute`);
  }
}

/** Principal for one value of a standard principal-side attribute. */
export function generatePrincipal(kind: AttributeKind, key: string, value: string, context: GeneratorContext): Principal | GenerationFailure {
  const httpOnly = httpOnlyFailure(kind, key, context);
  if (httpOnly !== undefined) return httpOnly;
  switch (kind) {
    case 'source.ip':
    case 'remote.ip': {
      const range = cidrRange(value);
      if (range instanceof CidrParseError) return failure(range.message);
      return kind === 'source.ip' ? { directRemoteIp: range } : { remoteIp: range };
    }
    case 'source.namespace':
      return authenticated(regexMatcher(namespaceRegex(value)), context);
    case 'source.serviceAccount':
      return authenticated(regexMatcher(serviceAccountRegex(context.policyNamespace, value)), context);
    case 'source.trustDomain':
      return authenticated(trustDomainMatcher(value), context);
    case 'source.principal':
      return authenticated(stringMatcherWithPrefix(value, SPIFFE_PREFIX), context);
    case 'request.headers': {
      const name = nameInBrackets(key.slice('request.headers'.length));
      if (isFailure(name)) return name;
      return envoyRejectsName(name) ?? { header: headerMatcher(name, value, false) };
    }
    default:
      return failure(`${kind} is not a principal attribute`);
  }
}

function jwtClaimStringMatcher(claim: string, matcher: StringMatcher): MetadataMatcher {
  return { filter: JWT_FILTER_NAME, path: [{ key: JWT_PAYLOAD }, { key: claim }], value: { stringMatch: matcher } };
}

/** One value matcher per value, or-ed when there are several (istiod `StringOrMatcher`). */
function stringOrMatcher(values: readonly string[]): ValueMatcher {
  return orMatcher(values.map((v) => ({ stringMatch: stringMatcher(v) })));
}

function orMatcher(matchers: ValueMatcher[]): ValueMatcher {
  return matchers.length === 1 && matchers[0] !== undefined ? matchers[0] : { orMatch: { valueMatchers: matchers } };
}

/** A claim that may be a string or a list of strings (spec §1.4.4 list form). */
function jwtClaimsListMatcher(claims: readonly string[], value: ValueMatcher): MetadataMatcher {
  return {
    filter: JWT_FILTER_NAME,
    path: [JWT_PAYLOAD, ...claims].map((key) => ({ key })),
    value: { orMatch: { valueMatchers: [{ listMatch: { oneOf: value } }, value] } },
  };
}

const MATCH_ANY: StringMatcher = { safeRegex: { regex: '.+' } };

function requestPrincipalMatchers(value: string): [StringMatcher, StringMatcher] {
  const slash = value.lastIndexOf('/');
  const found = slash >= 0;
  const issuer = found ? value.slice(0, slash) : value;
  const subject = found ? value.slice(slash + 1) : '';
  if (value === '*') return [MATCH_ANY, MATCH_ANY];
  if (value.startsWith('*')) {
    if (found) return [issuer === '*' ? MATCH_ANY : suffixMatcher(issuer.slice(1)), exactMatcher(subject)];
    return [MATCH_ANY, suffixMatcher(value.slice(1))];
  }
  if (value.endsWith('*')) {
    if (found) return [exactMatcher(issuer), subject === '*' ? MATCH_ANY : prefixMatcher(subject.slice(0, -1))];
    return [prefixMatcher(value.slice(0, -1)), MATCH_ANY];
  }
  return [exactMatcher(issuer), exactMatcher(subject)];
}

function trimBrackets(value: string): string {
  return value.replace(/^[[\]]+/u, '').replace(/[[\]]+$/u, '');
}

/** The filter and key of `experimental.envoy.filters.<filter>[<key>]`. */
function envoyFilterKey(key: string): [string, string] | GenerationFailure {
  let rest = key.startsWith('experimental.') ? key.slice('experimental.'.length) : key;
  if (rest.endsWith(']')) rest = rest.slice(0, -1);
  const bracket = rest.indexOf('[');
  if (bracket < 0) return failure(`invalid key: ${key}`);
  return [rest.slice(0, bracket), rest.slice(bracket + 1)];
}

/** Permission for the whole value list of an extended permission-side attribute. */
export function generateExtendedPermission(kind: AttributeKind, key: string, values: readonly string[], context: GeneratorContext): Permission | GenerationFailure {
  if (kind !== 'experimental.envoy.filters') return failure(`${kind} is not a permission attribute`);
  void context;
  const parts = envoyFilterKey(key);
  if (isFailure(parts)) return parts;
  const badName = envoyRejectsName(parts[0]) ?? envoyRejectsName(parts[1]);
  if (badName !== undefined) return badName;
  const matchers: ValueMatcher[] = values.map((value) =>
    value.startsWith('[') && value.endsWith(']')
      ? { listMatch: { oneOf: { stringMatch: stringMatcher(trimBrackets(value)) } } }
      : { stringMatch: stringMatcher(value) },
  );
  return { metadata: { filter: parts[0], path: [{ key: parts[1] }], value: orMatcher(matchers) } };
}

/** Principal for the whole value list of an extended principal-side attribute. */
export function generateExtendedPrincipal(kind: AttributeKind, key: string, values: readonly string[], context: GeneratorContext): Principal | GenerationFailure {
  const httpOnly = httpOnlyFailure(kind, key, context);
  if (httpOnly !== undefined) return httpOnly;
  switch (kind) {
    case 'request.auth.principal': {
      const alternatives: Principal[] = values.map((value) => {
        const [issuer, subject] = requestPrincipalMatchers(value);
        return { andIds: { ids: [{ metadata: jwtClaimStringMatcher('iss', issuer) }, { metadata: jwtClaimStringMatcher('sub', subject) }] } };
      });
      return alternatives.length === 1 && alternatives[0] !== undefined ? alternatives[0] : { orIds: { ids: alternatives } };
    }
    case 'request.auth.audiences':
      return { metadata: jwtClaimsListMatcher(['aud'], stringOrMatcher(values)) };
    case 'request.auth.presenter':
      return { metadata: jwtClaimsListMatcher(['azp'], stringOrMatcher(values)) };
    case 'request.auth.claims': {
      const claims = namesInNestedBrackets(key.slice('request.auth.claims'.length));
      if (isFailure(claims)) return claims;
      const badName = claims.map(envoyRejectsName).find((f) => f !== undefined);
      return badName ?? { metadata: jwtClaimsListMatcher(claims, stringOrMatcher(values)) };
    }
    case 'experimental.envoy.filters':
    case 'destination.ip':
    case 'destination.port':
    case 'connection.sni':
    case 'source.ip':
    case 'remote.ip':
    case 'source.namespace':
    case 'source.serviceAccount':
    case 'source.trustDomain':
    case 'source.principal':
    case 'request.headers':
    case 'hosts':
    case 'methods':
    case 'paths':
      return failure(`${kind} is not an extended principal attribute`);
    default:
      return assertNever(kind, 'attribute kind');
  }
}
