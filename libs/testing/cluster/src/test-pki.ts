// A throwaway PKI for TLS tests, made with the openssl command line in a directory of the caller's:
// a CA, a server certificate for 127.0.0.1/localhost, client certificates by CommonName, and a
// second CA whose client certificate the first does not trust. EC P-256 keys, valid for two days.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TestPki {
  readonly caFile: string;
  readonly server: CertificateFiles;
  /** Client certificates signed by the CA, by CommonName. */
  readonly clients: Readonly<Record<string, CertificateFiles>>;
  /** A client certificate (CommonName `untrusted`) signed by another CA. */
  readonly untrustedClient: CertificateFiles;
}

function openssl(dir: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30_000 });
}

function newCa(dir: string, name: string): CertificateFiles {
  const files = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', files.keyFile, '-out', files.certFile, '-subj', `/CN=${name}`, '-days', '2']);
  return files;
}

function issue(dir: string, ca: CertificateFiles, name: string, commonName: string, extensions: string): CertificateFiles {
  const files = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, extensions);
  openssl(dir, ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', files.keyFile, '-out', csr, '-subj', `/CN=${commonName}`]);
  openssl(dir, ['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-CAcreateserial', '-out', files.certFile, '-days', '2', '-extfile', ext]);
  return files;
}

/** Writes the PKI into `dir` (which must exist) and returns its files. */
export function createTestPki(dir: string, clientCommonNames: readonly string[]): TestPki {
  const ca = newCa(dir, 'ca');
  const server = issue(dir, ca, 'server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  const clients: Record<string, CertificateFiles> = {};
  clientCommonNames.forEach((commonName, index) => {
    clients[commonName] = issue(dir, ca, `client-${index}`, commonName, 'extendedKeyUsage=clientAuth\n');
  });
  const otherCa = newCa(dir, 'other-ca');
  const untrustedClient = issue(dir, otherCa, 'untrusted-client', 'untrusted', 'extendedKeyUsage=clientAuth\n');
  return { caFile: ca.certFile, server, clients, untrustedClient };
}
