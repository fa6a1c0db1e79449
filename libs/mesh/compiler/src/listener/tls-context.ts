// The mTLS transport socket of inbound chains in STRICT and PERMISSIVE mode (spec §4.4):
// client certificates required, SDS certificate `default`, root `ROOTCA`, SANs pinned to the
// mesh's trust domains.
import type { ConfigSource, DownstreamTlsContext, TransportSocket } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import type { MeshSettings } from '../input';

/** istiod's default cipher suites for sidecar inbound mTLS. */
export const DEFAULT_CIPHER_SUITES: readonly string[] = Object.freeze([
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
]);

/** SDS resource names of the workload certificate and the mesh root. */
export const SDS_CERTIFICATE = 'default';
export const SDS_ROOT = 'ROOTCA';
const SDS_CLUSTER = 'sds-grpc';

function sdsConfig(): ConfigSource {
  return {
    apiConfigSource: {
      apiType: 'GRPC',
      setNodeOnFirstMessageOnly: true,
      transportApiVersion: 'V3',
      grpcServices: [{ envoyGrpc: { clusterName: SDS_CLUSTER } }],
    },
    initialFetchTimeout: '0s',
    resourceApiVersion: 'V3',
  };
}

/** Trust domains accepted from peers: mesh, aliases, CA certificate domains; unique, none empty. */
export function trustDomainsForValidation(mesh: MeshSettings): string[] {
  if (mesh.skipValidateTrustDomain) return [];
  const all = [mesh.trustDomain, ...mesh.trustDomainAliases, ...mesh.caCertificateTrustDomains].filter((td) => td !== '');
  return [...new Set(all)];
}

/** The DownstreamTlsContext for an HTTP or TCP chain. */
export function inboundTlsContext(chainClass: 'HTTP' | 'TCP', mesh: MeshSettings): DownstreamTlsContext {
  const alpn = chainClass === 'TCP' && mesh.metadataExchange ? ['istio-peer-exchange', 'h2', 'http/1.1'] : ['h2', 'http/1.1'];
  const trustDomains = trustDomainsForValidation(mesh);
  return {
    commonTlsContext: {
      alpnProtocols: alpn,
      tlsParams: {
        tlsMinimumProtocolVersion: mesh.minTlsProtocolVersion === 'TLSV1_3' ? 'TLSv1_3' : 'TLSv1_2',
        tlsMaximumProtocolVersion: 'TLSv1_3',
        cipherSuites: [...(mesh.cipherSuites ?? DEFAULT_CIPHER_SUITES)],
      },
      tlsCertificateSdsSecretConfigs: [{ name: SDS_CERTIFICATE, sdsConfig: sdsConfig() }],
      combinedValidationContext: {
        defaultValidationContext: trustDomains.length > 0 ? { matchSubjectAltNames: trustDomains.map((td) => ({ prefix: `spiffe://${td}/` })) } : {},
        validationContextSdsSecretConfig: { name: SDS_ROOT, sdsConfig: sdsConfig() },
      },
    },
    requireClientCertificate: true,
  };
}

/** `envoy.transport_sockets.tls` wrapping a context. */
export function tlsTransportSocket(context: DownstreamTlsContext): TransportSocket {
  return { name: FILTER_NAMES.tlsTransportSocket, typedConfig: { '@type': TYPE_URLS.downstreamTlsContext, ...context } };
}
