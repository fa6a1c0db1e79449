/**
 * What compile and explain share: load and validate the inputs (an invalid policy is never
 * compiled, as istiod's webhook would have rejected it), build the workload and mesh settings
 * from flags, and locate compiler diagnostics in the inputs.
 */
import { loadResources, positionOfPath, validateResources } from '@ward/mesh/istio-api';
import type { AuthorizationPolicy, Diagnostic, LoadedResource, PeerAuthentication } from '@ward/mesh/istio-api';
import { PORT_PROTOCOLS } from '@ward/mesh/compiler';
import type { CompilerDiagnostic, MeshSettings, PortProtocol, Workload, WorkloadPort } from '@ward/mesh/compiler';
import type { SourceText } from '../cli/read-inputs';

/** A finding of any layer, with the place in the inputs it is about. */
export interface LocatedFinding {
  readonly severity: 'error' | 'warning' | 'info';
  readonly code: string;
  readonly message: string;
  readonly sourceName?: string;
  readonly line?: number;
  readonly path?: string;
  readonly resource?: { readonly kind: string; readonly namespace: string; readonly name: string };
}

export interface PolicyInputs {
  readonly loaded: readonly LoadedResource[];
  readonly authorizationPolicies: readonly AuthorizationPolicy[];
  readonly peerAuthentications: readonly PeerAuthentication[];
  /** Load and validation findings (errors mean: do not compile). */
  readonly findings: readonly LocatedFinding[];
}

export function fromDiagnostic(diagnostic: Diagnostic): LocatedFinding {
  return {
    severity: diagnostic.severity,
    code: diagnostic.code,
    message: diagnostic.istioctlMessage ?? diagnostic.message,
    sourceName: diagnostic.sourceName,
    ...(diagnostic.position === undefined ? {} : { line: diagnostic.position.line }),
    ...(diagnostic.path === undefined ? {} : { path: diagnostic.path }),
    ...(diagnostic.resource === undefined ? {} : { resource: diagnostic.resource }),
  };
}

/** Loads and validates every input; problems are inputs that could not be read. */
export function loadPolicyInputs(sources: readonly SourceText[], problems: readonly Diagnostic[], defaultNamespace: string): PolicyInputs {
  const findings: LocatedFinding[] = problems.map(fromDiagnostic);
  const loaded: LoadedResource[] = [];
  for (const source of sources) {
    const result = loadResources(source.text, { sourceName: source.sourceName });
    loaded.push(...result.resources);
    findings.push(...result.diagnostics.filter((d) => d.severity !== 'info').map(fromDiagnostic));
  }
  findings.push(...validateResources(loaded, { defaultNamespace }).map(fromDiagnostic));
  const authorizationPolicies: AuthorizationPolicy[] = [];
  const peerAuthentications: PeerAuthentication[] = [];
  for (const { resource } of loaded) {
    if (resource.kind === 'AuthorizationPolicy') authorizationPolicies.push(resource);
    if (resource.kind === 'PeerAuthentication') peerAuthentications.push(resource);
  }
  return { loaded, authorizationPolicies, peerAuthentications, findings };
}

/** Places a compiler diagnostic at the line of the field it names. */
export function locateCompilerDiagnostic(diagnostic: CompilerDiagnostic, loaded: readonly LoadedResource[], defaultNamespace: string): LocatedFinding {
  const ref = diagnostic.resource;
  const match = ref === undefined
    ? undefined
    : loaded.find(({ resource }) => {
        const namespace = resource.metadata.namespace === '' ? defaultNamespace : resource.metadata.namespace;
        return resource.kind === ref.kind && resource.metadata.name === ref.name && namespace === ref.namespace;
      });
  const position = match === undefined ? undefined : diagnostic.path === undefined ? match.origin.position : positionOfPath(match, diagnostic.path);
  return {
    severity: diagnostic.severity,
    code: diagnostic.code,
    message: diagnostic.message,
    ...(match === undefined ? {} : { sourceName: match.origin.sourceName }),
    ...(position === undefined ? {} : { line: position.line }),
    ...(diagnostic.path === undefined ? {} : { path: diagnostic.path }),
    ...(ref === undefined ? {} : { resource: ref }),
  };
}

/** One finding per line: `<file>:<line>: <severity> [<code>] <Kind ns/name>: <message> (<path>)`. */
export function formatFinding(finding: LocatedFinding): string {
  const where = finding.sourceName === undefined ? 'ward-mesh' : `${finding.sourceName}${finding.line === undefined ? '' : `:${finding.line}`}`;
  const resource = finding.resource === undefined ? '' : ` ${finding.resource.kind} ${finding.resource.namespace}/${finding.resource.name}:`;
  const path = finding.path === undefined ? '' : ` (${finding.path})`;
  return `${where}: ${finding.severity} [${finding.code}]${resource} ${finding.message}${path}`;
}

const MAX_PORTS = 256;

/** `8080/HTTP,9000/TCP,15000` → workload ports (no protocol: UNKNOWN, i.e. protocol sniffing). */
export function parsePorts(text: string | undefined): WorkloadPort[] | string {
  if (text === undefined || text.trim() === '') return [];
  const items = text.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length > MAX_PORTS) return `--ports: at most ${MAX_PORTS} ports`;
  const ports: WorkloadPort[] = [];
  for (const item of items) {
    const match = /^(\d{1,5})(?:\/([A-Za-z0-9_-]+))?$/.exec(item);
    const port = Number(match?.[1]);
    if (match === null || port < 1 || port > 65535) return `--ports: expected <port>[/<protocol>] with a port in 1..65535, got ${JSON.stringify(item)}`;
    const protocol = PORT_PROTOCOLS.find((candidate) => candidate.toLowerCase() === (match[2] ?? 'UNKNOWN').toLowerCase());
    if (protocol === undefined) return `--ports: unknown protocol ${JSON.stringify(match[2])} (one of ${PORT_PROTOCOLS.join(', ')})`;
    ports.push({ port, protocol: protocol as PortProtocol });
  }
  return ports;
}

/** Mesh settings given by flags; everything else keeps istiod's defaults. */
export function meshFromFlags(values: Readonly<Record<string, unknown>>): Partial<MeshSettings> | string {
  const mesh: { rootNamespace?: string; trustDomain?: string; trustDomainAliases?: string[] } = {};
  if (typeof values['root-namespace'] === 'string') mesh.rootNamespace = values['root-namespace'];
  if (typeof values['trust-domain'] === 'string') {
    if (values['trust-domain'] === '' || values['trust-domain'].includes('/')) return '--trust-domain: expected a trust domain such as cluster.local';
    mesh.trustDomain = values['trust-domain'];
  }
  if (typeof values['trust-domain-aliases'] === 'string') {
    mesh.trustDomainAliases = values['trust-domain-aliases'].split(',').map((alias) => alias.trim()).filter((alias) => alias !== '');
  }
  return mesh;
}

/** The workload of `--workload ns/name --labels ... --ports ...`. */
export function workloadFromFlags(workload: { namespace: string; name: string; labels: Readonly<Record<string, string>> }, ports: readonly WorkloadPort[]): Workload {
  return { name: workload.name, namespace: workload.namespace, labels: workload.labels, ports };
}
