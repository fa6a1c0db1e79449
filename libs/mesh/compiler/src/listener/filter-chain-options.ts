// Filter-chain match options per mTLS mode and port protocol class (istiod's
// filterchain_options.go, spec §4.4 table). Each option becomes one filter chain.
import type { MtlsMode } from '../authn/peer-authentication';
import type { ProtocolClass } from '../input';

/** One filter chain to build: what it matches and what it runs. */
export interface ChainOption {
  readonly transportProtocol: 'tls' | 'raw_buffer';
  readonly applicationProtocols?: readonly string[];
  /** HTTP chains run the HTTP connection manager, TCP chains tcp_proxy. */
  readonly chainClass: 'HTTP' | 'TCP';
  /** Terminates mesh mTLS (carries the DownstreamTlsContext). */
  readonly mtls: boolean;
}

const MTLS_HTTP_ALPNS = ['istio-http/1.0', 'istio-http/1.1', 'istio-h2'];
const PLAINTEXT_HTTP_ALPNS = ['http/1.1', 'h2c'];
const MTLS_TCP_WITH_MX_ALPNS = ['istio-peer-exchange', 'istio'];
const ALL_ISTIO_MTLS_ALPNS = ['istio', 'istio-peer-exchange', ...MTLS_HTTP_ALPNS];

const OPTIONS: Readonly<Record<MtlsMode, Readonly<Record<ProtocolClass, readonly ChainOption[]>>>> = {
  STRICT: {
    HTTP: [{ transportProtocol: 'tls', chainClass: 'HTTP', mtls: true }],
    TCP: [{ transportProtocol: 'tls', chainClass: 'TCP', mtls: true }],
    auto: [
      { transportProtocol: 'tls', applicationProtocols: MTLS_HTTP_ALPNS, chainClass: 'HTTP', mtls: true },
      { transportProtocol: 'tls', chainClass: 'TCP', mtls: true },
    ],
  },
  PERMISSIVE: {
    HTTP: [
      { transportProtocol: 'tls', applicationProtocols: ALL_ISTIO_MTLS_ALPNS, chainClass: 'HTTP', mtls: true },
      { transportProtocol: 'raw_buffer', chainClass: 'HTTP', mtls: false },
    ],
    TCP: [
      { transportProtocol: 'tls', applicationProtocols: ALL_ISTIO_MTLS_ALPNS, chainClass: 'TCP', mtls: true },
      { transportProtocol: 'tls', chainClass: 'TCP', mtls: false },
      { transportProtocol: 'raw_buffer', chainClass: 'TCP', mtls: false },
    ],
    auto: [
      { transportProtocol: 'tls', applicationProtocols: MTLS_HTTP_ALPNS, chainClass: 'HTTP', mtls: true },
      { transportProtocol: 'raw_buffer', applicationProtocols: PLAINTEXT_HTTP_ALPNS, chainClass: 'HTTP', mtls: false },
      { transportProtocol: 'tls', applicationProtocols: MTLS_TCP_WITH_MX_ALPNS, chainClass: 'TCP', mtls: true },
      { transportProtocol: 'raw_buffer', chainClass: 'TCP', mtls: false },
      { transportProtocol: 'tls', chainClass: 'TCP', mtls: false },
    ],
  },
  DISABLE: {
    HTTP: [{ transportProtocol: 'raw_buffer', chainClass: 'HTTP', mtls: false }],
    TCP: [{ transportProtocol: 'raw_buffer', chainClass: 'TCP', mtls: false }],
    auto: [
      { transportProtocol: 'raw_buffer', applicationProtocols: PLAINTEXT_HTTP_ALPNS, chainClass: 'HTTP', mtls: false },
      { transportProtocol: 'raw_buffer', chainClass: 'TCP', mtls: false },
    ],
  },
};

/** The chains istiod builds for a port in `mode` with protocol class `protocol`. */
export function chainOptions(mode: MtlsMode, protocol: ProtocolClass): readonly ChainOption[] {
  return OPTIONS[mode][protocol];
}
