// meshConfig extension providers → Envoy ext_authz filter configs (spec §2.5). A provider with
// any problem is "bad": policies using it compile to deny rules instead.
import type { BufferSettings, HttpExtAuthz, HttpStatus, StatusCode, ListStringMatcher, MetadataMatcher, NetworkExtAuthz, StringMatcher } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import type { ExtAuthzGrpcProvider, ExtAuthzHttpProvider, ExtAuthzRequestBody, ExtensionProvider, MeshService } from '../input';
import { canonicalDuration } from './duration';
import { SHADOW_STAT_PREFIX, TCP_STAT_PREFIX } from './local-filters';

/** A provider after resolution: its filter configs, or why it cannot be used. */
export interface ResolvedProvider {
  readonly http?: HttpExtAuthz;
  /** Only gRPC providers have a TCP (network) ext_authz. */
  readonly tcp?: NetworkExtAuthz;
  readonly errors: readonly string[];
}

const EXT_AUTHZ_MATCH_PREFIX = 'istio-ext-authz';
const DEFAULT_TIMEOUT = '600s';

/** `envoy.type.v3.StatusCode` names by number. */
const STATUS_CODE_NAMES: Readonly<Record<number, StatusCode>> = {
  0: 'Empty', 100: 'Continue', 200: 'OK', 201: 'Created', 202: 'Accepted', 203: 'NonAuthoritativeInformation', 204: 'NoContent',
  205: 'ResetContent', 206: 'PartialContent', 207: 'MultiStatus', 208: 'AlreadyReported', 226: 'IMUsed', 300: 'MultipleChoices',
  301: 'MovedPermanently', 302: 'Found', 303: 'SeeOther', 304: 'NotModified', 305: 'UseProxy', 307: 'TemporaryRedirect',
  308: 'PermanentRedirect', 400: 'BadRequest', 401: 'Unauthorized', 402: 'PaymentRequired', 403: 'Forbidden', 404: 'NotFound',
  405: 'MethodNotAllowed', 406: 'NotAcceptable', 407: 'ProxyAuthenticationRequired', 408: 'RequestTimeout', 409: 'Conflict',
  410: 'Gone', 411: 'LengthRequired', 412: 'PreconditionFailed', 413: 'PayloadTooLarge', 414: 'URITooLong',
  415: 'UnsupportedMediaType', 416: 'RangeNotSatisfiable', 417: 'ExpectationFailed', 421: 'MisdirectedRequest',
  422: 'UnprocessableEntity', 423: 'Locked', 424: 'FailedDependency', 426: 'UpgradeRequired', 428: 'PreconditionRequired',
  429: 'TooManyRequests', 431: 'RequestHeaderFieldsTooLarge', 500: 'InternalServerError', 501: 'NotImplemented',
  502: 'BadGateway', 503: 'ServiceUnavailable', 504: 'GatewayTimeout', 505: 'HTTPVersionNotSupported', 506: 'VariantAlsoNegotiates',
  507: 'InsufficientStorage', 508: 'LoopDetected', 510: 'NotExtended', 511: 'NetworkAuthenticationRequired',
};

/** Provider names must be DNS-1123 labels: lowercase letters, digits, inner hyphens, ≤ 63. */
export function providerNameProblem(name: string): string | undefined {
  if (name.length > 63) return `provider name too long (max 63 characters): ${name.length}`;
  const bad = /[^a-z0-9-]/u.exec(name);
  if (bad !== null) return /[A-Z]/u.test(bad[0]) ? `uppercase letters not allowed (use lowercase): character ${JSON.stringify(bad[0])} at position ${bad.index}` : `invalid character ${JSON.stringify(bad[0])} at position ${bad.index}`;
  if (name.startsWith('-') || name.endsWith('-')) return 'provider name cannot start or end with hyphen';
  return undefined;
}

/** `[namespace/]hostname` → hostname and `outbound|<port>||<hostname>`, or a problem. */
export function lookupCluster(service: string, port: number, services: readonly MeshService[]): { hostname: string; cluster: string } | string {
  if (service === '') return 'service must not be empty';
  const parts = service.split('/');
  let found: MeshService | undefined;
  if (parts.length === 2) {
    found = services.find((s) => s.hostname === parts[1] && s.namespace === parts[0]);
  } else {
    const candidates = services.filter((s) => s.hostname === service);
    const namespaces = [...new Set(candidates.map((s) => s.namespace))];
    if (namespaces.length > 1) return `found ${service} in multiple namespaces [${namespaces.join(' ')}], specify the namespace explicitly in the format of <Namespace>/<Hostname>`;
    found = candidates[0];
  }
  if (found === undefined) return `could not find service ${service} in Istio service registry`;
  return { hostname: found.hostname, cluster: `outbound|${port}||${found.hostname}` };
}

function statusOnError(status: string | undefined, errors: string[]): HttpStatus | undefined {
  if (status === undefined || status === '') return undefined;
  if (!/^[+-]?\d{1,10}$/u.test(status)) {
    errors.push(`invalid statusOnError ${JSON.stringify(status)}`);
    return undefined;
  }
  const name = STATUS_CODE_NAMES[Number(status)];
  if (name === undefined) {
    errors.push(`unsupported statusOnError ${status}`);
    return undefined;
  }
  return { code: name };
}

function headerPatterns(headers: readonly string[] | undefined): ListStringMatcher | undefined {
  if (headers === undefined || headers.length === 0) return undefined;
  const patterns: StringMatcher[] = headers.map((header) => {
    if (header.startsWith('*')) return { ignoreCase: true, suffix: header.slice(1) };
    if (header.endsWith('*')) return { ignoreCase: true, prefix: header.slice(0, -1) };
    return { exact: header, ignoreCase: true };
  });
  return { patterns };
}

function bodySettings(body: ExtAuthzRequestBody | undefined): BufferSettings | undefined {
  if (body === undefined) return undefined;
  return {
    ...(body.maxRequestBytes ? { maxRequestBytes: body.maxRequestBytes } : {}),
    ...(body.allowPartialMessage ? { allowPartialMessage: true } : {}),
    ...(body.packAsBytes ? { packAsBytes: true } : {}),
  };
}

/** Metadata matcher enabling ext_authz when a CUSTOM rule of `provider` matched. */
export function filterEnabledMetadata(rbacFilterName: string, provider: string): MetadataMatcher {
  return {
    filter: rbacFilterName,
    path: [{ key: `${SHADOW_STAT_PREFIX.extAuthz}shadow_effective_policy_id` }],
    value: { stringMatch: { prefix: `${EXT_AUTHZ_MATCH_PREFIX}-${provider}` } },
  };
}

function commonProblems(config: ExtAuthzGrpcProvider, errors: string[]): string {
  if (!Number.isInteger(config.port) || config.port < 1 || config.port > 65535) errors.push(`port must be in the range [1, 65535], found: ${config.port}`);
  if (config.timeout === undefined) return DEFAULT_TIMEOUT;
  const timeout = canonicalDuration(config.timeout);
  if (timeout === undefined) errors.push(`invalid timeout ${JSON.stringify(config.timeout)}: expected a duration such as "0.5s"`);
  return timeout ?? DEFAULT_TIMEOUT;
}

function buildGrpc(name: string, config: ExtAuthzGrpcProvider, services: readonly MeshService[], errors: string[]): ResolvedProvider {
  const timeout = commonProblems(config, errors);
  const target = lookupCluster(config.service, config.port, services);
  if (typeof target === 'string') errors.push(target);
  const status = statusOnError(config.statusOnError, errors);
  if (errors.length > 0 || typeof target === 'string') return { errors };
  const grpcService = { envoyGrpc: { clusterName: target.cluster, authority: target.hostname }, timeout };
  const withRequestBody = bodySettings(config.includeRequestBodyInCheck);
  const http: HttpExtAuthz = {
    ...(status !== undefined ? { statusOnError: status } : {}),
    ...(config.failOpen ? { failureModeAllow: true } : {}),
    grpcService,
    filterEnabledMetadata: filterEnabledMetadata(FILTER_NAMES.httpRbac, name),
    transportApiVersion: 'V3',
    ...(withRequestBody !== undefined ? { withRequestBody } : {}),
  };
  const tcp: NetworkExtAuthz = {
    statPrefix: TCP_STAT_PREFIX,
    ...(config.failOpen ? { failureModeAllow: true } : {}),
    transportApiVersion: 'V3',
    grpcService,
    filterEnabledMetadata: filterEnabledMetadata(FILTER_NAMES.networkRbac, name),
  };
  return { http, tcp, errors };
}

function buildHttp(name: string, config: ExtAuthzHttpProvider, services: readonly MeshService[], errors: string[]): ResolvedProvider {
  const timeout = commonProblems(config, errors);
  const target = lookupCluster(config.service, config.port, services);
  if (typeof target === 'string') errors.push(target);
  const status = statusOnError(config.statusOnError, errors);
  if (config.pathPrefix !== undefined && config.pathPrefix !== '' && !config.pathPrefix.startsWith('/')) {
    errors.push(`pathPrefix must begin with \`/\`, found: ${JSON.stringify(config.pathPrefix)}`);
  }
  const lists: Array<[string, readonly string[] | undefined]> = [
    ['IncludeRequestHeadersInCheck', config.includeRequestHeadersInCheck],
    ['IncludeHeadersInCheck', config.includeHeadersInCheck],
    ['HeadersToDownstreamOnDeny', config.headersToDownstreamOnDeny],
    ['HeadersToDownstreamOnAllow', config.headersToDownstreamOnAllow],
    ['HeadersToUpstreamOnAllow', config.headersToUpstreamOnAllow],
  ];
  for (const [field, values] of lists) {
    if ((values ?? []).includes('*')) errors.push(`a single wildcard ("*") is not supported, change it to either prefix or suffix match: ${field}`);
  }
  if (errors.length > 0 || typeof target === 'string') return { errors };
  return { http: httpExtAuthzConfig(name, config, { ...target, timeout }, status), errors };
}

function httpExtAuthzConfig(name: string, config: ExtAuthzHttpProvider, target: { hostname: string; cluster: string; timeout: string }, status: HttpStatus | undefined): HttpExtAuthz {
  const allowedHeaders = headerPatterns(config.includeRequestHeadersInCheck) ?? headerPatterns(config.includeHeadersInCheck);
  const additional = Object.keys(config.includeAdditionalHeadersInCheck ?? {}).sort();
  const hasResponse = [config.headersToUpstreamOnAllow, config.headersToDownstreamOnDeny, config.headersToDownstreamOnAllow].some((l) => (l?.length ?? 0) > 0);
  const withRequestBody = bodySettings(config.includeRequestBodyInCheck);
  return {
    ...(status !== undefined ? { statusOnError: status } : {}),
    ...(config.failOpen ? { failureModeAllow: true } : {}),
    transportApiVersion: 'V3',
    httpService: {
      ...(config.pathPrefix ? { pathPrefix: config.pathPrefix } : {}),
      serverUri: { timeout: target.timeout, uri: `http://${target.hostname}`, cluster: target.cluster },
      ...(additional.length > 0
        ? { authorizationRequest: { headersToAdd: additional.map((key) => ({ key, value: config.includeAdditionalHeadersInCheck?.[key] ?? '' })) } }
        : {}),
      ...(hasResponse
        ? {
            authorizationResponse: {
              ...optional('allowedUpstreamHeaders', headerPatterns(config.headersToUpstreamOnAllow)),
              ...optional('allowedClientHeaders', headerPatterns(config.headersToDownstreamOnDeny)),
              ...optional('allowedClientHeadersOnSuccess', headerPatterns(config.headersToDownstreamOnAllow)),
            },
          }
        : {}),
    },
    filterEnabledMetadata: filterEnabledMetadata(FILTER_NAMES.httpRbac, name),
    ...(withRequestBody !== undefined ? { withRequestBody } : {}),
    ...(allowedHeaders !== undefined ? { allowedHeaders } : {}),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/** Resolves every ext_authz provider of the mesh (other provider kinds are not listed). */
export function resolveExtensionProviders(providers: readonly ExtensionProvider[], services: readonly MeshService[]): Map<string, ResolvedProvider> {
  const resolved = new Map<string, ResolvedProvider>();
  providers.forEach((provider, index) => {
    if (provider.envoyExtAuthzGrpc === undefined && provider.envoyExtAuthzHttp === undefined) return;
    const errors: string[] = [];
    if (provider.name === '') errors.push(`extension provider name must not be empty, found empty at index: ${index}`);
    else if (resolved.has(provider.name)) errors.push(`extension provider name must be unique, found duplicate: ${provider.name}`);
    const nameProblem = provider.name === '' ? undefined : providerNameProblem(provider.name);
    if (nameProblem !== undefined) errors.push(`invalid provider name ${JSON.stringify(provider.name)}: ${nameProblem}`);
    const built =
      provider.envoyExtAuthzHttp !== undefined
        ? buildHttp(provider.name, provider.envoyExtAuthzHttp, services, errors)
        : buildGrpc(provider.name, provider.envoyExtAuthzGrpc as ExtAuthzGrpcProvider, services, errors);
    resolved.set(provider.name, errors.length > 0 ? { errors } : built);
  });
  return resolved;
}
