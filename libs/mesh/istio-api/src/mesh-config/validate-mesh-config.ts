/**
 * istiod's `ValidateMeshConfig` for the fields ward reads. Trust domains, the protocol detection
 * timeout and mesh mTLS make istiod reject the mesh config (errors here); a bad extension
 * provider is only logged by istiod ("can be ignored if the given extension provider is not
 * used"), and CUSTOM policies naming it then fail closed — a warning here.
 */
import { parseIpAddress } from '../validate/go-netip';
import type { MeshConfig, MeshConfigExtAuthzGrpc, MeshConfigExtAuthzHttp, MeshConfigExtensionProvider } from './mesh-config';

/** One finding: severity, code, message and the field path it is about. */
export interface MeshConfigFinding {
  readonly severity: 'error' | 'warning';
  readonly code: 'MESH_CONFIG_INVALID_VALUE' | 'MESH_CONFIG_INVALID_PROVIDER';
  readonly message: string;
  readonly path: string;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/u;

/** `ValidateTrustDomain`: dot-separated DNS-1123 labels; the last may be empty (`istio.io.`). */
export function trustDomainProblem(domain: string): string | undefined {
  if (domain === '') return 'empty domain name not allowed';
  const labels = domain.split('.');
  const bad = labels.some((label, index) => !(index === labels.length - 1 && label === '') && !DNS1123_LABEL.test(label));
  return bad ? `trust domain name ${JSON.stringify(domain)} invalid` : undefined;
}

function isFqdn(host: string): boolean {
  const trimmed = host.endsWith('.') ? host.slice(0, -1) : host;
  return trimmed !== '' && trimmed.length <= 255 && trimmed.split('.').every((label) => DNS1123_LABEL.test(label.toLowerCase()));
}

function hostPartProblems(host: string): string[] {
  const problems: string[] = [];
  if (host !== '*' && !host.includes('.')) problems.push('short names (non FQDN) are not allowed');
  const rest = host.startsWith('*.') ? host.slice(2) : host;
  if (host !== '*' && !isFqdn(rest)) problems.push(`invalid host ${host}`);
  if (host.includes('*') && host !== '*' && !host.startsWith('*.')) problems.push(`partial wildcard ${JSON.stringify(host)} not allowed`);
  return problems;
}

/** `validateExtensionProviderService`: `host`, an IP, or `namespace/host`. */
export function serviceProblems(service: string): string[] {
  if (service === '') return ['service must not be empty'];
  const slash = service.indexOf('/');
  if (slash === -1) return isFqdn(service) || parseIpAddress(service).ok ? [] : [`invalid service fmt ${service}: ${service} is not a valid IP`];
  const [namespace, host] = [service.slice(0, slash), service.slice(slash + 1)];
  if (namespace === '' || host === '') return ['config namespace and dnsName in host entry cannot be empty'];
  const problems: string[] = [];
  if (!['*', '.', '~'].includes(namespace) && !DNS1123_LABEL.test(namespace)) problems.push(`invalid namespace value ${JSON.stringify(namespace)} in sidecar`);
  return [...problems, ...hostPartProblems(host)];
}

function statusOnErrorProblem(status: string | undefined): string | undefined {
  if (status === undefined || status === '') return undefined;
  if (!/^[+-]?\d+$/u.test(status) || Math.abs(Number(status)) > 2_147_483_647) return `invalid statusOnError value ${status}: strconv.ParseInt: parsing ${JSON.stringify(status)}: invalid syntax`;
  return ENVOY_STATUS_CODES.has(Number(status)) ? undefined : `unsupported statusOnError value ${status}`;
}

/** The numbers of `envoy.type.v3.StatusCode`. */
const ENVOY_STATUS_CODES = new Set([
  0, 100, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405,
  406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 423, 424, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505,
  506, 507, 508, 510, 511,
]);

function extAuthzProblems(config: MeshConfigExtAuthzGrpc | MeshConfigExtAuthzHttp): Array<{ problem: string; field: string }> {
  const problems: Array<{ problem: string; field: string }> = [];
  if (config.port < 1 || config.port > 65535) problems.push({ problem: `port number ${config.port} must be in the range 1..65535`, field: 'port' });
  for (const problem of serviceProblems(config.service)) problems.push({ problem, field: 'service' });
  const status = statusOnErrorProblem(config.statusOnError);
  if (status !== undefined) problems.push({ problem: status, field: 'statusOnError' });
  const pathPrefix = 'pathPrefix' in config ? config.pathPrefix : undefined;
  if (pathPrefix !== undefined && pathPrefix !== '' && !pathPrefix.startsWith('/')) {
    problems.push({ problem: `pathPrefix should begin with \`/\` but found ${JSON.stringify(pathPrefix)}`, field: 'pathPrefix' });
  }
  return problems;
}

function providerFindings(provider: MeshConfigExtensionProvider, index: number, names: Set<string>): MeshConfigFinding[] {
  const path = `extensionProviders[${index}]`;
  const found: Array<{ problem: string; path: string }> = [];
  if (provider.name === '') found.push({ problem: 'empty extension provider name', path: `${path}.name` });
  else if (names.has(provider.name)) found.push({ problem: `duplicate extension provider name ${provider.name}`, path: `${path}.name` });
  names.add(provider.name);
  const [kind, config] = provider.envoyExtAuthzHttp !== undefined ? ['envoyExtAuthzHttp', provider.envoyExtAuthzHttp] : ['envoyExtAuthzGrpc', provider.envoyExtAuthzGrpc];
  if (config !== undefined) for (const { problem, field } of extAuthzProblems(config)) found.push({ problem, path: `${path}.${kind}.${field}` });
  else if (provider.kind === undefined) found.push({ problem: 'unsupported provider: <nil>', path });
  return found.map(({ problem, path: at }) => ({ severity: 'warning', code: 'MESH_CONFIG_INVALID_PROVIDER', message: `invalid extension provider ${provider.name}: ${problem}`, path: at }));
}

function durationNanos(text: string): number {
  const match = /^(-)?(\d+)(?:\.(\d+))?s$/u.exec(text);
  if (match === null) return Number.NaN;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 1e9 + Number((match[3] ?? '').padEnd(9, '0')));
}

/** The findings of `ValidateMeshConfig` (and ward's own needs) on a decoded MeshConfig. */
export function validateMeshConfig(config: MeshConfig): MeshConfigFinding[] {
  const findings: MeshConfigFinding[] = [];
  const error = (message: string, path: string): void => void findings.push({ severity: 'error', code: 'MESH_CONFIG_INVALID_VALUE', message, path });
  if (config.trustDomain !== undefined) {
    const problem = trustDomainProblem(config.trustDomain);
    if (problem !== undefined) error(`trustDomain: ${problem}`, 'trustDomain');
  }
  (config.trustDomainAliases ?? []).forEach((alias, index) => {
    const problem = trustDomainProblem(alias);
    if (problem !== undefined) error(`trustDomainAliases[${index}], domain \`${alias}\` : ${problem}`, `trustDomainAliases[${index}]`);
  });
  if (config.rootNamespace === '') error('rootNamespace must not be empty', 'rootNamespace');
  const timeout = config.protocolDetectionTimeout;
  if (timeout !== undefined && durationNanos(timeout) % 1e6 !== 0) error('invalid protocol detection timeout: only durations to ms precision are supported', 'protocolDetectionTimeout');
  if ((config.meshMtls?.ecdhCurves ?? []).length > 0) error('mesh TLS does not support ECDH curves configuration', 'meshMTLS.ecdhCurves');
  const port = config.proxyInboundListenPort;
  if (port !== undefined && (port < 0 || port > 65535)) error(`proxyInboundListenPort ${port} is not a port (1..65535)`, 'proxyInboundListenPort');
  const names = new Set<string>();
  (config.extensionProviders ?? []).forEach((provider, index) => findings.push(...providerFindings(provider, index, names)));
  return findings;
}
