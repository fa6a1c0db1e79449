// The client port's TLS, from etcd's flags: --cert-file and --key-file serve TLS, --trusted-ca-file
// is what client certificates are verified against, --client-cert-auth requires one. Files are read
// once at start (@ward/platform/grpc-server's loadTlsMaterial names the option and file of any
// problem, never the contents).
import { readFileSync } from 'node:fs';
import { ServerCredentials, credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { loadTlsMaterial, tlsChannelCredentials, tlsServerCredentials, type TlsMaterial } from '@ward/platform/grpc-server';
import type { GatewayConfig } from '../config';

type TlsFiles = Pick<GatewayConfig, 'certFile' | 'keyFile' | 'trustedCaFile'>;

/**
 * Mutual TLS towards the raft-nodes when GATEWAY_NODE_TLS_* are set: the material (for the framed
 * Exchange's connections) and the grpc-js credentials of the channels.
 */
export function nodeTls(config: Pick<GatewayConfig, 'nodeTlsCertFile' | 'nodeTlsKeyFile' | 'nodeTlsCaFile'>): { material: TlsMaterial; credentials: ChannelCredentials } | undefined {
  if (config.nodeTlsCertFile === '') return undefined;
  const material = loadTlsMaterial({
    certFile: config.nodeTlsCertFile,
    keyFile: config.nodeTlsKeyFile,
    caFile: config.nodeTlsCaFile,
    names: { cert: 'GATEWAY_NODE_TLS_CERT_FILE', key: 'GATEWAY_NODE_TLS_KEY_FILE', ca: 'GATEWAY_NODE_TLS_CA_FILE' },
  });
  return { material, credentials: tlsChannelCredentials(material) };
}

/**
 * TLS towards the token-services: their certificates verified against GATEWAY_TOKEN_SERVICE_CA_FILE;
 * the gateway presents its node certificate (GATEWAY_NODE_TLS_*) when it has one.
 */
export function tokenServiceChannelCredentials(
  config: Pick<GatewayConfig, 'tokenServiceCaFile' | 'nodeTlsCertFile' | 'nodeTlsKeyFile'>,
): ChannelCredentials | undefined {
  if (config.tokenServiceCaFile === '') return undefined;
  const ca = loadTlsMaterialCaOnly(config.tokenServiceCaFile);
  if (config.nodeTlsCertFile === '') return credentials.createSsl(ca);
  const material = loadTlsMaterial({
    certFile: config.nodeTlsCertFile,
    keyFile: config.nodeTlsKeyFile,
    caFile: config.tokenServiceCaFile,
    names: { cert: 'GATEWAY_NODE_TLS_CERT_FILE', key: 'GATEWAY_NODE_TLS_KEY_FILE', ca: 'GATEWAY_TOKEN_SERVICE_CA_FILE' },
  });
  return tlsChannelCredentials(material);
}

/** A CA bundle file's bytes (bounded, checked to hold a certificate). */
function loadTlsMaterialCaOnly(path: string): Buffer {
  const bytes = readFileSync(path);
  if (bytes.length > 1024 * 1024 || !bytes.toString('latin1').includes('-----BEGIN CERTIFICATE-----')) {
    throw new TypeError('GATEWAY_TOKEN_SERVICE_CA_FILE: not a PEM CA bundle');
  }
  return bytes;
}

/** Whether the configuration serves TLS on the client port. */
export function servesTls(config: Pick<GatewayConfig, 'certFile'>): boolean {
  return config.certFile !== '';
}

/** The client port's certificate, key and trusted CA bundle (null without GATEWAY_CERT_FILE). */
export function clientPortTls(config: TlsFiles): TlsMaterial | null {
  if (!servesTls(config)) return null;
  return loadTlsMaterial({
    certFile: config.certFile,
    keyFile: config.keyFile,
    caFile: config.trustedCaFile,
    names: { cert: 'GATEWAY_CERT_FILE', key: 'GATEWAY_KEY_FILE', ca: 'GATEWAY_TRUSTED_CA_FILE' },
  });
}

/**
 * The client port's gRPC credentials: plaintext without GATEWAY_CERT_FILE, else TLS with the
 * certificate and key (checked to belong together), verifying client certificates against the
 * trusted CA bundle and requiring one when GATEWAY_CLIENT_CERT_AUTH is on.
 */
export function serverCredentials(config: Pick<GatewayConfig, 'clientCertAuth'>, material: TlsMaterial | null): ServerCredentials {
  if (material === null) return ServerCredentials.createInsecure();
  return tlsServerCredentials(material, config.clientCertAuth);
}
