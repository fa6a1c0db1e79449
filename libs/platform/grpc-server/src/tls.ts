// TLS material for gRPC servers and channels, read from PEM files once at start. Every problem
// names the option and the file, never the file's contents (a key's bytes stay out of messages).
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { credentials as channelCredentials, ServerCredentials, type ChannelCredentials } from '@grpc/grpc-js';

/** PEM files larger than this are refused (a CA bundle is tens of KiB). */
const MAX_PEM_FILE_BYTES = 1024 * 1024;

export class TlsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsConfigError';
  }
}

/** The files, and the option names that set them (for messages). Empty caFile: none. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  readonly names: { readonly cert: string; readonly key: string; readonly ca: string };
}

/** A checked certificate chain and its key, and the CA bundle when one was given. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | null;
}

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

function privateKeyOf(option: string, path: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    // The parser's message is not passed on: it is about the key's bytes.
    throw new TlsConfigError(`${option}: ${path} holds no unencrypted PEM private key`);
  }
}

/** Reads and checks the files: the certificate parses, the key is its key, the CA bundle parses. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const cert = readPem(files.names.cert, files.certFile);
  const key = readPem(files.names.key, files.keyFile);
  const [leaf] = certificatesOf(files.names.cert, files.certFile, cert);
  if (!leaf!.checkPrivateKey(privateKeyOf(files.names.key, files.keyFile, key))) {
    throw new TlsConfigError(`${files.names.key}: ${files.keyFile} is not the private key of the certificate in ${files.certFile}`);
  }
  let ca: Buffer | null = null;
  if (files.caFile !== '') {
    ca = readPem(files.names.ca, files.caFile);
    certificatesOf(files.names.ca, files.caFile, ca);
  }
  return { cert, key, ca };
}

/** Server credentials; with `requireClientCertificate`, only clients with a certificate the CA signed get in. */
export function tlsServerCredentials(material: TlsMaterial, requireClientCertificate: boolean): ServerCredentials {
  if (requireClientCertificate && material.ca === null) throw new TlsConfigError('a client certificate can only be required with a CA bundle to verify it against');
  return ServerCredentials.createSsl(material.ca, [{ cert_chain: material.cert, private_key: material.key }], requireClientCertificate);
}

/** Channel credentials presenting the certificate, trusting servers the CA signed (the system's CAs without one). */
export function tlsChannelCredentials(material: TlsMaterial): ChannelCredentials {
  return channelCredentials.createSsl(material.ca, material.key, material.cert);
}
