// Cross-check harness: the same RBAC config and the same request evaluated by ward's engine and by
// the independent RBAC engine inside @grpc/grpc-js-xds. The RBAC JSON goes through Envoy's protos
// (strict protojson decode → binary → proto-loader objects), as grpc-js-xds receives it over xDS.
import { Metadata } from '@grpc/grpc-js';
import { parseConfig, type RbacPolicyGroup, type UnifiedInfo } from '@grpc/grpc-js-xds/build/src/rbac';
import { checkEnvoyMessage, MESSAGE_NAMES, toProtoLoaderObject, type RBAC } from '@ward/mesh/envoy-api';
import type { WorkloadConfig } from '../src/compile-workload';
import { parseIp } from '../src/authz/cidr';
import { normalizeRequestPath, pathWithoutQuery } from '../src/simulate/path-normalization';
import { evaluateRbac, type RbacAttributes } from '../src/simulate/rbac-engine';
import { clientCertificate, DEFAULT_TRAFFIC_ADDRESSES, type SimulatedTraffic } from '../src/simulate/traffic';

/** One RBAC engine of a compiled workload: enforced or shadow rules of one filter. */
export interface RbacUnderTest {
  readonly label: string;
  readonly protocol: 'http' | 'tcp';
  readonly rbac: RBAC;
}

/** The RBAC messages of a compiled workload grpc-js-xds can evaluate (it rejects LOG). */
export function rbacEngines(config: WorkloadConfig): RbacUnderTest[] {
  const out: RbacUnderTest[] = [];
  const collect = (protocol: 'http' | 'tcp', filters: ReadonlyArray<{ name?: string; typedConfig?: unknown }>): void => {
    filters.forEach((filter, index) => {
      const typed = (filter.typedConfig ?? {}) as { rules?: RBAC; shadowRules?: RBAC };
      for (const [kind, rbac] of [['rules', typed.rules], ['shadowRules', typed.shadowRules]] as const) {
        if (rbac !== undefined && rbac.action !== 'LOG') out.push({ label: `${protocol}[${index}].${kind}`, protocol, rbac });
      }
    });
  };
  collect('http', config.httpFilters);
  collect('tcp', config.networkFilters);
  return out;
}

const engines = new WeakMap<RBAC, RbacPolicyGroup>();

/** grpc-js-xds's engine for an RBAC message, fed through Envoy's protos (memoized per message). */
export function grpcEngine(rbac: RBAC): RbacPolicyGroup {
  const cached = engines.get(rbac);
  if (cached !== undefined) return cached;
  const engine = buildGrpcEngine(rbac);
  engines.set(rbac, engine);
  return engine;
}

function buildGrpcEngine(rbac: RBAC): RbacPolicyGroup {
  const checked = checkEnvoyMessage(MESSAGE_NAMES.rbac, JSON.parse(JSON.stringify(rbac)));
  if (!checked.ok) throw new Error(`RBAC does not decode: ${JSON.stringify(checked.issues)}`);
  return parseConfig(toProtoLoaderObject(MESSAGE_NAMES.rbac, checked.bytes) as never);
}

function headersOf(traffic: SimulatedTraffic): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  const request = traffic.http;
  if (request === undefined) return headers;
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const key = name.toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), ...(typeof value === 'string' ? [value] : value)]);
  }
  headers.set(':authority', [request.host]);
  headers.set(':method', [request.method]);
  headers.set(':path', [normalizeRequestPath(request.path)]);
  return headers;
}

function ip(text: string): NonNullable<ReturnType<typeof parseIp>> {
  const parsed = parseIp(text);
  if (parsed === undefined) throw new Error(`bad address ${text}`);
  return parsed;
}

/** ward's view of the traffic (mTLS assumed terminated for `mtls`). */
export function wardAttributes(traffic: SimulatedTraffic, protocol: 'http' | 'tcp'): RbacAttributes {
  const certificate = traffic.transport === 'mtls' ? clientCertificate(traffic) : undefined;
  const sourceIp = traffic.sourceIp ?? DEFAULT_TRAFFIC_ADDRESSES.sourceIp;
  const http = protocol === 'http' && traffic.http !== undefined;
  return {
    destinationIp: ip(traffic.destinationIp ?? DEFAULT_TRAFFIC_ADDRESSES.destinationIp),
    destinationPort: traffic.port,
    directRemoteIp: ip(sourceIp),
    remoteIp: ip(traffic.remoteIp ?? sourceIp),
    requestedServerName: traffic.sni ?? '',
    ...(certificate !== undefined ? { peerCertificate: certificate } : {}),
    headers: http ? headersOf(traffic) : new Map(),
    ...(http ? { urlPath: pathWithoutQuery(normalizeRequestPath(traffic.http?.path ?? '/')) } : {}),
    metadata: new Map(),
  };
}

/** grpc-js-xds's view of the same traffic. */
export function grpcInfo(traffic: SimulatedTraffic, protocol: 'http' | 'tcp'): UnifiedInfo {
  const certificate = traffic.transport === 'mtls' ? clientCertificate(traffic) : undefined;
  const metadata = new Metadata();
  if (protocol === 'http') {
    for (const [name, values] of headersOf(traffic)) for (const value of values) metadata.add(name, value);
  }
  const sans = [...(certificate?.uriSans ?? []).map((s) => `URI:${s}`), ...(certificate?.dnsSans ?? []).map((s) => `DNS:${s}`)];
  return {
    headers: metadata,
    urlPath: protocol === 'http' && traffic.http !== undefined ? pathWithoutQuery(normalizeRequestPath(traffic.http.path)) : '',
    destinationIp: traffic.destinationIp ?? DEFAULT_TRAFFIC_ADDRESSES.destinationIp,
    destinationPort: traffic.port,
    sourceIp: traffic.sourceIp ?? DEFAULT_TRAFFIC_ADDRESSES.sourceIp,
    tls: certificate !== undefined,
    peerCertificate: certificate === undefined ? null : ({ subjectaltname: sans.join(', '), subject: certificate.subject === '' ? {} : { CN: certificate.subject } } as never),
  };
}

/** One decision compared. */
export interface CrossCheckOutcome {
  readonly label: string;
  readonly ward: boolean;
  readonly grpc: boolean;
}

/** Evaluates every engine of `config` on `traffic` with both implementations. */
export function crossCheck(config: WorkloadConfig, traffic: SimulatedTraffic): CrossCheckOutcome[] {
  return rbacEngines(config)
    .filter((engine) => engine.protocol === 'tcp' || traffic.http !== undefined)
    .map((engine) => ({
      label: engine.label,
      ward: evaluateRbac(engine.rbac, wardAttributes(traffic, engine.protocol)).allowed,
      grpc: grpcEngine(engine.rbac).apply(grpcInfo(traffic, engine.protocol)),
    }));
}
