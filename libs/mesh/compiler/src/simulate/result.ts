// What the simulator reports for one connection or request.
import type { DetectedConnection } from './filter-chain-match';

/** Final fate of the traffic. */
export type SimulationOutcome =
  /** Reached the application (router / tcp_proxy). */
  | 'allowed'
  /** Rejected by an RBAC or ext_authz filter: HTTP 403 or a closed connection. */
  | 'denied'
  /** No filter chain matched: the connection is closed without any response. */
  | 'reset'
  /** The mTLS handshake failed (no, untrusted or wrong client certificate). */
  | 'tls-handshake-failed'
  /** The bytes do not fit the chain (TLS or raw TCP into an HTTP connection manager). */
  | 'protocol-error';

/** One engine's verdict inside an RBAC filter. */
export interface EngineVerdict {
  readonly allowed: boolean;
  readonly matchedPolicy?: string;
}

/** One filter as the traffic passed through it. */
export interface FilterEvaluation {
  readonly index: number;
  readonly name: string;
  /** RBAC action of the filter (enforced rules, else shadow rules). */
  readonly action?: 'ALLOW' | 'DENY' | 'LOG';
  readonly enforced?: EngineVerdict;
  readonly shadow?: EngineVerdict & { readonly statPrefix: string };
  /** ext_authz: whether the CUSTOM mark enabled it and what the authorizer answered. */
  readonly extAuthz?: { readonly enabled: boolean; readonly decision?: 'allow' | 'deny' };
  /** The filter stopped the traffic. */
  readonly stopped: boolean;
}

/** Which filter and which policy decided the outcome. */
export interface Decision {
  readonly filterIndex?: number;
  readonly filterName?: string;
  readonly action?: 'ALLOW' | 'DENY' | 'LOG';
  readonly policy?: string;
  readonly reason: string;
}

/** The chain the listener picked. */
export interface SelectedChain {
  readonly index: number;
  readonly name: string;
  readonly destinationPort?: number;
  readonly transportProtocol?: string;
  readonly applicationProtocols: readonly string[];
  /** The chain terminates mesh mTLS. */
  readonly mtls: boolean;
  readonly kind: 'HTTP' | 'TCP';
}

/** The full result. */
export interface SimulationResult {
  readonly outcome: SimulationOutcome;
  readonly allowed: boolean;
  readonly detected: DetectedConnection;
  readonly chain?: SelectedChain;
  /** Peer principal the RBAC filters saw (URI SAN), when mTLS was terminated. */
  readonly peerPrincipal?: string;
  readonly filters: readonly FilterEvaluation[];
  readonly decision: Decision;
  readonly httpResponse?: { readonly status: number; readonly body: string; readonly responseCodeDetails: string };
  readonly connectionTerminationDetails?: string;
  /** Counters incremented, by full stat name. */
  readonly stats: readonly string[];
  readonly dynamicMetadata: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}
