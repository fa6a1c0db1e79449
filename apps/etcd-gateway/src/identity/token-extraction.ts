// Where a client's token travels: gRPC metadata `token` (etcd's Go client), else `authorization`
// (what etcd's JSON gateway makes of the HTTP Authorization header). etcd 3.7 strips a leading
// "Bearer ". Only the first value counts. A present but empty token is still a token (etcd then
// answers `invalid auth token`).
import type { Metadata } from '@grpc/grpc-js';
import type { Credentials } from './identity';

/** Tokens longer than this are refused before any lookup (JWTs of 4096-bit RSA keys are ~900 chars). */
export const MAX_TOKEN_LENGTH_CHARS = 8192;

const BEARER_PREFIX = 'Bearer ';

/** Strips etcd 3.7's optional `Bearer ` prefix (case-sensitive, as etcd's strings.TrimPrefix). */
export function stripBearer(value: string): string {
  return value.startsWith(BEARER_PREFIX) ? value.slice(BEARER_PREFIX.length) : value;
}

function firstText(values: readonly unknown[]): string | undefined {
  if (values.length === 0) return undefined;
  const first = values[0];
  return typeof first === 'string' ? first : Buffer.isBuffer(first) ? first.toString('latin1') : undefined;
}

/** The token a gRPC call carries, or undefined when it carries none. */
export function tokenFromMetadata(metadata: Metadata): string | undefined {
  const fromToken = firstText(metadata.get('token'));
  const raw = fromToken ?? firstText(metadata.get('authorization'));
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
export function grpcCredentials(metadata: Metadata, peer: { readonly peerCommonName: string | undefined; readonly peer: string }): Credentials {
  return {
    token: tokenFromMetadata(metadata),
    get commonName() {
      return metadata.get('grpcgateway-accept').length > 0 ? undefined : peer.peerCommonName;
    },
    get address() {
      return addressOfPeer(peer.peer);
    },
  };
}

/** The client address of a grpc-js peer string (`1.2.3.4:5678`, `::1:5678`, or a bare address). */
export function addressOfPeer(peer: string): string {
  const colon = peer.lastIndexOf(':');
  if (colon <= 0) return peer;
  const port = peer.slice(colon + 1);
  return /^\d{1,5}$/.test(port) ? peer.slice(0, colon) : peer;
}
