/**
 * `security.istio.io/v1` and `v1beta1` PeerAuthentication (proto
 * `istio.security.v1beta1.PeerAuthentication`).
 */
import type { SecurityApiVersion } from './authorization-policy';
import type { ObjectMeta, WorkloadSelector } from './meta';

/** Enum `PeerAuthentication.MutualTLS.Mode`, in proto number order (UNSET = 0 inherits). */
export const MUTUAL_TLS_MODES = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'] as const;
export type MutualTlsMode = (typeof MUTUAL_TLS_MODES)[number];

/** `PeerAuthentication.MutualTLS`. `mode` is `UNSET` when not written. */
export interface MutualTls {
  readonly mode: MutualTlsMode;
}

/** The `spec` of a PeerAuthentication. */
export interface PeerAuthenticationSpec {
  readonly selector?: WorkloadSelector;
  /** Absent when not written or `null`; `{}` decodes as `{mode: 'UNSET'}`. */
  readonly mtls?: MutualTls;
  /**
   * `map<uint32, MutualTLS>` keyed by the canonical decimal text of the workload (container)
   * port. Present (possibly empty) when written, as istiod keeps an empty map non-nil. Keys
   * are any uint32; validation rejects 0 and values above 65535.
   */
  readonly portLevelMtls?: Readonly<Record<string, MutualTls>>;
}

/** A decoded PeerAuthentication with its metadata. */
export interface PeerAuthentication {
  readonly apiVersion: SecurityApiVersion;
  readonly kind: 'PeerAuthentication';
  readonly metadata: ObjectMeta;
  readonly spec: PeerAuthenticationSpec;
}

/** One `portLevelMtls` entry with a numeric port. */
export interface PortLevelMtlsEntry {
  readonly port: number;
  readonly mtls: MutualTls;
}

/** The `portLevelMtls` entries sorted by port (empty when absent). */
export function portLevelMtlsEntries(spec: PeerAuthenticationSpec): readonly PortLevelMtlsEntry[] {
  const entries: PortLevelMtlsEntry[] = [];
  for (const [key, mtls] of Object.entries(spec.portLevelMtls ?? {})) {
    entries.push({ port: Number(key), mtls });
  }
  return entries.sort((a, b) => a.port - b.port);
}
