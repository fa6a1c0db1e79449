/**
 * Who a request is from, as stamped into the ApplyRequest header: etcd's AuthInfo. The gateway
 * decides nothing with it; the raft-nodes check permissions at apply.
 */
export interface Identity {
  /** Empty for a request without a (used) token. */
  readonly username: string;
  /** 0 for a request without a (used) token. */
  readonly authRevision: number;
}

export const ANONYMOUS: Identity = Object.freeze({ username: '', authRevision: 0 });

/** The identity fields of an internal request (username, auth_revision as an int64 string). */
export function identityFields(identity: Identity): { username: string; auth_revision: string } {
  return { username: identity.username, auth_revision: String(identity.authRevision) };
}

/** An identity and whether it came from the gateway's short-lived resolution cache. */
export interface ResolvedIdentity extends Identity {
  readonly cached: boolean;
}

/**
 * What a caller presented: its token (from gRPC metadata or the HTTP header) and, on a gRPC call
 * over TLS with a verified client certificate, that certificate's CommonName.
 */
export interface Credentials {
  readonly token: string | undefined;
  readonly commonName?: string | undefined;
  /** The client's address (no port): what an anonymous caller's bounds are counted against. */
  readonly address?: string | undefined;
}
