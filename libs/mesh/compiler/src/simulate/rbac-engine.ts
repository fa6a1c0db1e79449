// Envoy's RBAC engine (spec §6.1, §6.4): policies in byte order of their names, first match wins;
// permissions and principals ORed inside a policy. The config is compiled once into predicates
// (compiled-rbac.ts) and the compiled form is kept per RBAC message object.
import type { RBAC } from '@ward/mesh/envoy-api';
import type { IpAddress } from '../authz/cidr';
import { compileRbac, evaluateCompiledRbac, type CompiledRbac } from './compiled-rbac';
import { RbacCompiler } from './rule-program';
import type { DynamicMetadata, HeaderMap } from './matchers';

export { compareBytewise } from './byte-order';
export { requireIp } from './request-attributes';

/** The peer certificate of a TLS-terminated connection. */
export interface PeerCertificate {
  readonly uriSans: readonly string[];
  readonly dnsSans: readonly string[];
  readonly subject: string;
}

/** Everything a policy can look at for one connection or request. */
export interface RbacAttributes {
  readonly destinationIp: IpAddress;
  readonly destinationPort: number;
  readonly directRemoteIp: IpAddress;
  readonly remoteIp: IpAddress;
  /** TLS SNI; `''` when none. */
  readonly requestedServerName: string;
  /** Present only when this proxy terminated TLS and the peer sent a certificate. */
  readonly peerCertificate?: PeerCertificate;
  /** Request headers incl. `:authority`, `:method`, `:path`; empty for a TCP connection. */
  readonly headers: HeaderMap;
  /** `:path` without query and fragment, normalized; undefined for TCP. */
  readonly urlPath?: string;
  readonly metadata: DynamicMetadata;
  /** Filter state `io.istio.peer_principal` (waypoint/HBONE only). */
  readonly peerPrincipalFilterState?: string;
}

/** Outcome of one engine (enforced or shadow). */
export interface EngineResult {
  readonly action: 'ALLOW' | 'DENY' | 'LOG';
  /** ALLOW: matched; DENY: not matched; LOG: always. */
  readonly allowed: boolean;
  /** The first matching policy in name order. */
  readonly matchedPolicy?: string;
}

const compiledEngines = new WeakMap<RBAC, CompiledRbac>();

/**
 * The compiled form of `rbac`, built on first use and kept for the life of the message object.
 * RBAC messages are treated as immutable: a changed config must be a new object.
 */
export function compiledRbacOf(rbac: RBAC): CompiledRbac {
  let compiled = compiledEngines.get(rbac);
  if (compiled === undefined) {
    compiled = compileRbac(rbac, new RbacCompiler());
    compiledEngines.set(rbac, compiled);
  }
  return compiled;
}

/** Evaluates an RBAC message: first matching policy in byte order decides. */
export function evaluateRbac(rbac: RBAC, attributes: RbacAttributes): EngineResult {
  return evaluateCompiledRbac(compiledRbacOf(rbac), attributes);
}
