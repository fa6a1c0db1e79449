// Where a client's token travels: gRPC metadata `token` (etcd's Go client), else `authorization`
// (what etcd's JSON gateway makes of the HTTP Authorization header). etcd 3.7 strips a leading
// "Bearer ". Only the first value counts. A present but empty token is still a token (etcd then
// answers `invalid auth token`).
import type { MetadataValue } from '@grpc/grpc-js';
import type { CallContext } from '@ward/platform/grpc-server';
import type { Credentials } from './identity';

/** Tokens longer than this are refused before any lookup (JWTs of 4096-bit RSA keys are ~900 chars). */
export const MAX_TOKEN_LENGTH_CHARS = 8192;

const BEARER_PREFIX = 'Bearer ';

/** Strips etcd 3.7's optional `Bearer ` prefix (case-sensitive, as etcd's strings.TrimPrefix). */
export function stripBearer(value: string): string {
  return value.startsWith(BEARER_PREFIX) ? value.slice(BEARER_PREFIX.length) : value;
}

function asText(value: MetadataValue | undefined): string | undefined {
  return typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('latin1') : undefined;
}

/** The token a gRPC call carries, or undefined when it carries none. */
export function tokenFromMetadata(call: Pick<CallContext, 'metadataValue'>): string | undefined {
  const raw = asText(call.metadataValue('token')) ?? asText(call.metadataValue('authorization'));
  return raw === undefined ? undefined : stripBearer(raw);
}

/** The token of a JSON gateway request: its Authorization header (no `token` header in etcd's gateway). */
export function tokenFromHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const value = headers['authorization'];
  const raw = Array.isArray(value) ? value[0] : value;
  return raw === undefined ? undefined : stripBearer(raw);
}

/**
 * What a gRPC call presents: its token and, over TLS with a verified client certificate, that
 * certificate's CommonName. A call carrying `grpcgateway-accept` metadata came through a JSON
 * gateway holding its own client certificate: etcd never takes that certificate for a user. The
 * CommonName is read only when asked for (no token, certificate identities on): reading the peer
 * certificate builds an object per call.
 */
export function grpcCredentials(call: Pick<CallContext, 'metadataValue' | 'peerCommonName' | 'peer'>): Credentials {
  return new GrpcCredentials(call);
}

/**
 * A class, not an object literal with getters: made per call, such a literal gets a hidden class
 * of its own, which keeps the call's objects alive until a full collection.
 */
class GrpcCredentials implements Credentials {
  readonly token: string | undefined;

  constructor(private readonly call: Pick<CallContext, 'metadataValue' | 'peerCommonName' | 'peer'>) {
    this.token = tokenFromMetadata(call);
  }

  get commonName(): string | undefined {
    return this.call.metadataValue('grpcgateway-accept') !== undefined ? undefined : this.call.peerCommonName;
  }

  get address(): string {
    return addressOfPeer(this.call.peer);
  }
}

/** The client address of a grpc-js peer string (`1.2.3.4:5678`, `::1:5678`, or a bare address). */
export function addressOfPeer(peer: string): string {
  const colon = peer.lastIndexOf(':');
  if (colon <= 0) return peer;
  const port = peer.slice(colon + 1);
  return /^\d{1,5}$/.test(port) ? peer.slice(0, colon) : peer;
}
