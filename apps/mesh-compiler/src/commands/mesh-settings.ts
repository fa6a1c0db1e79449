/**
 * The mesh settings compile and explain use: a MeshConfig file (`--mesh-config`, or the HTTP
 * body's `meshConfig` text) read with istio-api's loader, overridden by explicit flags
 * (`--root-namespace`, `--trust-domain`, `--trust-domain-aliases`).
 *
 * ward-mesh has no service registry: the service of each ext_authz provider is taken to exist,
 * with the namespace its `service` names (`ns/host`, or `<name>.<ns>.svc.<domain>`).
 */
import { loadMeshConfig } from '@ward/mesh/istio-api';
import type { MeshConfig, MeshConfigExtensionProvider } from '@ward/mesh/istio-api';
import type { ExtensionProvider, MeshService, MeshSettings } from '@ward/mesh/compiler';
import type { SourceText } from '../cli/read-inputs';
import { fromDiagnostic } from './policy-inputs';
import type { LocatedFinding } from './policy-inputs';

/** What compile and explain pass to the compiler about the mesh. */
export interface ResolvedMesh {
  readonly mesh: Partial<MeshSettings>;
  readonly services: readonly MeshService[];
  /** Findings of the MeshConfig file (errors mean: do not compile). */
  readonly findings: readonly LocatedFinding[];
}

function extensionProvider(provider: MeshConfigExtensionProvider): ExtensionProvider | undefined {
  if (provider.envoyExtAuthzHttp !== undefined) return { name: provider.name, envoyExtAuthzHttp: provider.envoyExtAuthzHttp };
  if (provider.envoyExtAuthzGrpc !== undefined) return { name: provider.name, envoyExtAuthzGrpc: provider.envoyExtAuthzGrpc };
  return undefined;
}

/** The compiler's mesh settings for a loaded MeshConfig (istiod's defaults for what it does not set). */
export function meshSettingsOf(config: MeshConfig): Partial<MeshSettings> {
  const providers = (config.extensionProviders ?? []).map(extensionProvider).filter((p): p is ExtensionProvider => p !== undefined);
  const tls = config.meshMtls;
  const minVersion = tls?.minProtocolVersion === 'TLSV1_3' ? { minTlsProtocolVersion: 'TLSV1_3' as const } : {};
  return {
    ...(config.rootNamespace !== undefined ? { rootNamespace: config.rootNamespace } : {}),
    ...(config.trustDomain !== undefined ? { trustDomain: config.trustDomain } : {}),
    ...(config.trustDomainAliases !== undefined ? { trustDomainAliases: config.trustDomainAliases } : {}),
    ...(config.caCertificateTrustDomains !== undefined ? { caCertificateTrustDomains: config.caCertificateTrustDomains } : {}),
    ...(providers.length > 0 ? { extensionProviders: providers } : {}),
    ...(config.proxyInboundListenPort !== undefined ? { inboundListenPort: config.proxyInboundListenPort } : {}),
    ...(config.protocolDetectionTimeout !== undefined ? { protocolDetectionTimeout: config.protocolDetectionTimeout } : {}),
    ...minVersion,
    ...(tls?.cipherSuites !== undefined && tls.cipherSuites.length > 0 ? { cipherSuites: tls.cipherSuites } : {}),
  };
}

const KUBERNETES_SERVICE_HOST = /^[^./]+\.([^./]+)\.svc(?:\.|$)/u;

/** The registry entries ward assumes for the ext_authz providers' services. */
export function assumedServices(providers: readonly ExtensionProvider[]): MeshService[] {
  const services = new Map<string, MeshService>();
  for (const provider of providers) {
    const service = (provider.envoyExtAuthzHttp ?? provider.envoyExtAuthzGrpc)?.service ?? '';
    if (service === '') continue;
    const slash = service.indexOf('/');
    const entry = slash >= 0 ? { namespace: service.slice(0, slash), hostname: service.slice(slash + 1) } : { namespace: KUBERNETES_SERVICE_HOST.exec(service)?.[1] ?? '', hostname: service };
    services.set(`${entry.namespace}/${entry.hostname}`, entry);
  }
  return [...services.values()];
}

/** Reads the MeshConfig text (if any) and applies the flag overrides. */
export function resolveMesh(meshConfig: SourceText | undefined, overrides: Partial<MeshSettings>): ResolvedMesh {
  if (meshConfig === undefined) return { mesh: overrides, services: [], findings: [] };
  const loaded = loadMeshConfig(meshConfig.text, { sourceName: meshConfig.sourceName });
  const findings = loaded.diagnostics.map(fromDiagnostic);
  if (loaded.meshConfig === undefined) return { mesh: overrides, services: [], findings };
  const mesh = { ...meshSettingsOf(loaded.meshConfig), ...overrides };
  return { mesh, services: assumedServices(mesh.extensionProviders ?? []), findings };
}

/** A hint for the common slip of compiling CUSTOM policies without the mesh's providers. */
export function meshConfigHint(findings: readonly LocatedFinding[], meshConfig: SourceText | undefined): string {
  const missing = meshConfig === undefined && findings.some((finding) => finding.code === 'COMPILE_CUSTOM_PROVIDER_INVALID');
  return missing ? 'ward-mesh: CUSTOM policies name extension providers of the mesh config: pass it with --mesh-config <file>\n' : '';
}
