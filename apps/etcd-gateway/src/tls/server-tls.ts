// The client port's TLS, from etcd's flags: --cert-file and --key-file serve TLS, --trusted-ca-file
// is what client certificates are verified against, --client-cert-auth requires one. Files are read
// once at start; every problem names the option and the file, never the file's contents.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ServerCredentials } from '@grpc/grpc-js';
import type { GatewayConfig } from '../config';

/** PEM files larger than this are refused (a CA bundle is tens of KiB). */
const MAX_PEM_FILE_BYTES = 1024 * 1024;

export class TlsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsConfigError';
  }
}

type TlsFiles = Pick<GatewayConfig, 'certFile' | 'keyFile' | 'trustedCaFile' | 'clientCertAuth'>;

function readPem(option: string, path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new TlsConfigError(`${option}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (bytes.length > MAX_PEM_FILE_BYTES) throw new TlsConfigError(`${option}: ${path} is larger than ${MAX_PEM_FILE_BYTES} bytes`);
  return bytes;
}

function certificatesOf(option: string, path: string, pem: Buffer): X509Certificate[] {
  const blocks = pem.toString('latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new TlsConfigError(`${option}: ${path} holds no PEM certificate`);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new TlsConfigError(`${option}: ${path} holds a certificate that does not parse`);
    }
  });
}

function privateKeyOf(path: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    // The parser's message is not passed on: it is about the key's bytes.
    throw new TlsConfigError(`GATEWAY_KEY_FILE: ${path} holds no unencrypted PEM private key`);
  }
}

/** Whether the configuration serves TLS on the client port. */
export function servesTls(config: Pick<GatewayConfig, 'certFile'>): boolean {
  return config.certFile !== '';
}

/**
 * The client port's gRPC credentials: plaintext without GATEWAY_CERT_FILE, else TLS with the
 * certificate and key (checked to belong together), verifying client certificates against the
 * trusted CA bundle and requiring one when GATEWAY_CLIENT_CERT_AUTH is on.
 */
export function serverCredentials(config: TlsFiles): ServerCredentials {
  if (!servesTls(config)) return ServerCredentials.createInsecure();
  const certPem = readPem('GATEWAY_CERT_FILE', config.certFile);
  const keyPem = readPem('GATEWAY_KEY_FILE', config.keyFile);
  const [leaf] = certificatesOf('GATEWAY_CERT_FILE', config.certFile, certPem);
  if (!leaf!.checkPrivateKey(privateKeyOf(config.keyFile, keyPem))) {
    throw new TlsConfigError(`GATEWAY_KEY_FILE: ${config.keyFile} is not the private key of the certificate in ${config.certFile}`);
  }
  let ca: Buffer | null = null;
  if (config.trustedCaFile !== '') {
    ca = readPem('GATEWAY_TRUSTED_CA_FILE', config.trustedCaFile);
    certificatesOf('GATEWAY_TRUSTED_CA_FILE', config.trustedCaFile, ca);
  }
  return ServerCredentials.createSsl(ca, [{ cert_chain: certPem, private_key: keyPem }], config.clientCertAuth);
}
