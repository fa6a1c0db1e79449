/**
 * Services declared to `ward-mesh serve --xds`, for xDS clients (`xds:///<host>:<port>`): the
 * Kubernetes `v1 Service` and `v1 Endpoints` documents among the policy inputs (`validate` skips
 * both kinds, so a policy directory may hold them next to its policies). ward-mesh has no
 * Kubernetes API to ask: these documents are its whole service registry.
 *
 * What is read: a Service's `metadata.name`/`namespace`, `spec.clusterIP` (the listener address;
 * absent or `None`: 0.0.0.0) and `spec.ports[].name`/`port`; an Endpoints' `subsets[].addresses[].ip`
 * and `subsets[].ports[].name`/`port` (the port of the Service port with the same name, as
 * Kubernetes pairs them). Other fields are accepted and not read. Every finding is an error that
 * refuses the whole change, located by file and line. No I/O.
 */
import { isIP } from 'node:net';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { SourceText } from '../cli/read-inputs';
import { formatFinding, type LocatedFinding } from '../commands/policy-inputs';

export interface ServicePort {
  readonly name: string;
  readonly port: number;
}

export interface ServiceEndpoint {
  readonly ip: string;
  readonly port: number;
}

export interface MeshService {
  readonly name: string;
  readonly namespace: string;
  /** `<name>.<namespace>.svc.<domain>`. */
  readonly hostname: string;
  readonly address: string;
  readonly ports: readonly ServicePort[];
  /** Endpoints per service port number. */
  readonly endpoints: ReadonlyMap<number, readonly ServiceEndpoint[]>;
}

export const SERVICE_LIMITS = Object.freeze({ maxServices: 1_000, maxPorts: 100, maxSubsets: 100, maxAddresses: 1_000 });
export const DNS_DOMAIN = 'cluster.local';

const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface ServicesResult {
  readonly services: readonly MeshService[];
  readonly findings: readonly LocatedFinding[];
  /** Sources holding at least one Service or Endpoints document. */
  readonly sourcesWithServices: ReadonlySet<string>;
}

interface Located {
  readonly sourceName: string;
  readonly line: number;
  readonly body: Record<string, unknown>;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** The Service and Endpoints documents of `sources`, each with its file and line (documents that do not parse are `validate`'s to report). */
function documentsOf(sources: readonly SourceText[]): { services: Located[]; endpoints: Located[] } {
  const services: Located[] = [];
  const endpoints: Located[] = [];
  for (const source of sources) {
    if (!/\bkind\b/.test(source.text) || !/\b(Service|Endpoints)\b/.test(source.text)) continue;
    const lineCounter = new LineCounter();
    let documents;
    try {
      documents = parseAllDocuments(source.text, { lineCounter, uniqueKeys: false });
    } catch {
      continue;
    }
    if (!Array.isArray(documents)) continue;
    for (const document of documents) {
      if (document.errors.length > 0) continue;
      let body: unknown;
      try {
        body = document.toJS({ maxAliasCount: 100 });
      } catch {
        continue;
      }
      const object = record(body);
      if (object === undefined || object['apiVersion'] !== 'v1') continue;
      const line = lineCounter.linePos(document.contents?.range?.[0] ?? 0).line;
      if (object['kind'] === 'Service') services.push({ sourceName: source.sourceName, line, body: object });
      if (object['kind'] === 'Endpoints') endpoints.push({ sourceName: source.sourceName, line, body: object });
    }
  }
  return { services, endpoints };
}

function identity(doc: Located, kind: string, defaultNamespace: string, findings: LocatedFinding[]): { name: string; namespace: string } | undefined {
  const metadata = record(doc.body['metadata']) ?? {};
  const name = metadata['name'];
  const namespace = metadata['namespace'] ?? defaultNamespace;
  const at = { sourceName: doc.sourceName, line: doc.line };
  const fail = (message: string, path: string) => findings.push({ severity: 'error', code: kind === 'Service' ? 'SERVICE_INVALID' : 'ENDPOINTS_INVALID', message, path, ...at });
  if (typeof name !== 'string' || name.length > 63 || !DNS_1035.test(name)) {
    fail(`${kind} metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, at most 63), found ${JSON.stringify(name ?? null)}`, 'metadata.name');
    return undefined;
  }
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_1123.test(namespace)) {
    fail(`${kind} metadata.namespace must be a DNS-1123 label, found ${JSON.stringify(namespace)}`, 'metadata.namespace');
    return undefined;
  }
  return { name, namespace };
}

/** Reads and checks the services of `sources`; any finding means the change must be refused. */
export function loadServices(sources: readonly SourceText[], defaultNamespace: string): ServicesResult {
  const { services: serviceDocs, endpoints: endpointDocs } = documentsOf(sources);
  const findings: LocatedFinding[] = [];
  const sourcesWithServices = new Set([...serviceDocs, ...endpointDocs].map((d) => d.sourceName));
  const declared = new Map<string, { service: Omit<MeshService, 'endpoints'>; endpoints: Map<number, ServiceEndpoint[]>; doc: Located }>();
  if (serviceDocs.length > SERVICE_LIMITS.maxServices) {
    findings.push({ severity: 'error', code: 'SERVICE_LIMIT', message: `more than ${SERVICE_LIMITS.maxServices} Services declared (${serviceDocs.length})` });
    return { services: [], findings, sourcesWithServices };
  }
  for (const doc of serviceDocs) {
    const id = identity(doc, 'Service', defaultNamespace, findings);
    if (id === undefined) continue;
    const resource = { kind: 'Service', namespace: id.namespace, name: id.name };
    const fail = (message: string, path: string) => findings.push({ severity: 'error', code: 'SERVICE_INVALID', message, path, sourceName: doc.sourceName, line: doc.line, resource });
    const key = `${id.namespace}/${id.name}`;
    if (declared.has(key)) {
      fail(`Service ${key} is declared twice (also at ${declared.get(key)?.doc.sourceName}:${declared.get(key)?.doc.line})`, 'metadata.name');
      continue;
    }
    const spec = record(doc.body['spec']) ?? {};
    const clusterIP = spec['clusterIP'];
    let address = '0.0.0.0';
    if (clusterIP !== undefined && clusterIP !== 'None' && clusterIP !== '') {
      if (typeof clusterIP !== 'string' || isIP(clusterIP) === 0) {
        fail(`spec.clusterIP must be an IPv4 or IPv6 address or "None", found ${JSON.stringify(clusterIP)}`, 'spec.clusterIP');
        continue;
      }
      address = clusterIP;
    }
    const rawPorts = spec['ports'];
    if (!Array.isArray(rawPorts) || rawPorts.length === 0 || rawPorts.length > SERVICE_LIMITS.maxPorts) {
      fail(`spec.ports must list 1 to ${SERVICE_LIMITS.maxPorts} ports`, 'spec.ports');
      continue;
    }
    const ports: ServicePort[] = [];
    let ok = true;
    for (const [index, raw] of rawPorts.entries()) {
      const entry = record(raw) ?? {};
      const port = entry['port'];
      const name = entry['name'] ?? '';
      if (!isPort(port)) {
        fail(`port must be an integer in 1..65535, found ${JSON.stringify(port ?? null)}`, `spec.ports[${index}].port`);
        ok = false;
      } else if (typeof name !== 'string' || (name !== '' && (name.length > 63 || !DNS_1123.test(name)))) {
        fail(`name must be a DNS-1123 label, found ${JSON.stringify(name)}`, `spec.ports[${index}].name`);
        ok = false;
      } else if (name === '' && rawPorts.length > 1) {
        fail('name is required when a Service has more than one port', `spec.ports[${index}].name`);
        ok = false;
      } else if (ports.some((p) => p.port === port || p.name === name)) {
        fail(`port ${port} (${JSON.stringify(name)}) repeats another port's number or name`, `spec.ports[${index}]`);
        ok = false;
      } else {
        ports.push({ name, port });
      }
    }
    if (!ok) continue;
    const hostname = `${id.name}.${id.namespace}.svc.${DNS_DOMAIN}`;
    declared.set(key, { service: { name: id.name, namespace: id.namespace, hostname, address, ports }, endpoints: new Map(ports.map((p) => [p.port, []])), doc });
  }
  const seenEndpoints = new Set<string>();
  for (const doc of endpointDocs) {
    const id = identity(doc, 'Endpoints', defaultNamespace, findings);
    if (id === undefined) continue;
    const resource = { kind: 'Endpoints', namespace: id.namespace, name: id.name };
    const fail = (message: string, path: string) => findings.push({ severity: 'error', code: 'ENDPOINTS_INVALID', message, path, sourceName: doc.sourceName, line: doc.line, resource });
    const key = `${id.namespace}/${id.name}`;
    const target = declared.get(key);
    if (target === undefined) {
      fail(`no Service ${key} is declared for these Endpoints`, 'metadata.name');
      continue;
    }
    if (seenEndpoints.has(key)) {
      fail(`Endpoints ${key} are declared twice`, 'metadata.name');
      continue;
    }
    seenEndpoints.add(key);
    const subsets = doc.body['subsets'] ?? [];
    if (!Array.isArray(subsets) || subsets.length > SERVICE_LIMITS.maxSubsets) {
      fail(`subsets must be a list of at most ${SERVICE_LIMITS.maxSubsets}`, 'subsets');
      continue;
    }
    for (const [s, rawSubset] of subsets.entries()) {
      const subset = record(rawSubset) ?? {};
      const addresses = subset['addresses'] ?? [];
      const ports = subset['ports'] ?? [];
      if (!Array.isArray(addresses) || addresses.length > SERVICE_LIMITS.maxAddresses) {
        fail(`addresses must be a list of at most ${SERVICE_LIMITS.maxAddresses}`, `subsets[${s}].addresses`);
        continue;
      }
      if (!Array.isArray(ports) || ports.length === 0 || ports.length > SERVICE_LIMITS.maxPorts) {
        fail(`ports must list 1 to ${SERVICE_LIMITS.maxPorts} ports`, `subsets[${s}].ports`);
        continue;
      }
      const ips: string[] = [];
      for (const [a, rawAddress] of addresses.entries()) {
        const ip = record(rawAddress)?.['ip'];
        if (typeof ip !== 'string' || isIP(ip) === 0) fail(`ip must be an IPv4 or IPv6 address, found ${JSON.stringify(ip ?? null)}`, `subsets[${s}].addresses[${a}].ip`);
        else ips.push(ip);
      }
      for (const [p, rawPort] of ports.entries()) {
        const entry = record(rawPort) ?? {};
        const port = entry['port'];
        const name = entry['name'] ?? '';
        const servicePort = target.service.ports.find((candidate) => candidate.name === name);
        if (!isPort(port)) {
          fail(`port must be an integer in 1..65535, found ${JSON.stringify(port ?? null)}`, `subsets[${s}].ports[${p}].port`);
        } else if (servicePort === undefined) {
          fail(`no port named ${JSON.stringify(name)} in Service ${key} (its ports: ${target.service.ports.map((sp) => JSON.stringify(sp.name)).join(', ')})`, `subsets[${s}].ports[${p}].name`);
        } else {
          const list = target.endpoints.get(servicePort.port) ?? [];
          for (const ip of ips) if (!list.some((e) => e.ip === ip && e.port === port)) list.push({ ip, port });
          target.endpoints.set(servicePort.port, list);
        }
      }
    }
  }
  if (findings.length > 0) return { services: [], findings, sourcesWithServices };
  const services = [...declared.values()]
    .map(({ service, endpoints }) => ({ ...service, endpoints: endpoints as ReadonlyMap<number, readonly ServiceEndpoint[]> }))
    .sort((a, b) => a.hostname.localeCompare(b.hostname));
  return { services, findings, sourcesWithServices };
}

/** The findings as report lines (`<file>:<line>: error [CODE] Kind ns/name: message (path)`). */
export function servicesReport(findings: readonly LocatedFinding[]): string {
  return findings.map((f) => `${formatFinding(f)}\n`).join('');
}
