import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '@ward/testing/cluster';
import { gatewayConfig } from '../config';
import { TlsConfigError } from '@ward/platform/grpc-server';
import { clientPortTls, nodeTls, serverCredentials, servesTls } from './server-tls';

let dir: string;
let pki: TestPki;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ward-server-tls-'));
  pki = createTestPki(dir, ['example.com']);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files = (overrides: Partial<{ certFile: string; keyFile: string; trustedCaFile: string; clientCertAuth: boolean }> = {}) => ({
  certFile: pki.server.certFile,
  keyFile: pki.server.keyFile,
  trustedCaFile: pki.caFile,
  clientCertAuth: true,
  ...overrides,
});

function refusal(overrides: Parameters<typeof files>[0]): TlsConfigError {
  try {
    serverCredentials(files(overrides), clientPortTls(files(overrides)));
  } catch (error) {
    expect(error).toBeInstanceOf(TlsConfigError);
    return error as TlsConfigError;
  }
  throw new Error('serverCredentials accepted the files');
}

describe('serverCredentials (etcd --cert-file/--key-file/--trusted-ca-file/--client-cert-auth)', () => {
  it('plaintext without a certificate; TLS with a matching certificate and key', () => {
    expect(servesTls({ certFile: '' })).toBe(false);
    const plaintext = files({ certFile: '', keyFile: '', trustedCaFile: '', clientCertAuth: false });
    expect(serverCredentials(plaintext, clientPortTls(plaintext))._isSecure()).toBe(false);
    const tls = serverCredentials(files(), clientPortTls(files()));
    expect(tls).toBeInstanceOf(ServerCredentials);
    expect(tls._isSecure()).toBe(true);
  });

  it('names the option and the file of an unreadable one', () => {
    expect(refusal({ certFile: join(dir, 'missing.crt') }).message).toBe(`GATEWAY_CERT_FILE: cannot read ${join(dir, 'missing.crt')} (ENOENT)`);
    expect(refusal({ trustedCaFile: join(dir, 'missing-ca.crt') }).message).toContain('GATEWAY_TRUSTED_CA_FILE: cannot read');
  });

  it('refuses a key that is not the certificate’s, without quoting either file', () => {
    const error = refusal({ keyFile: pki.clients['example.com']!.keyFile });
    expect(error.message).toBe(`GATEWAY_KEY_FILE: ${pki.clients['example.com']!.keyFile} is not the private key of the certificate in ${pki.server.certFile}`);
    const key = readFileSync(pki.clients['example.com']!.keyFile, 'utf8');
    const body = key.split('\n')[1]!;
    expect(error.message).not.toContain(body);
  });

  it('refuses files that hold no certificate or no key, without passing the parser’s words on', () => {
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n');
    expect(refusal({ certFile: garbage }).message).toBe(`GATEWAY_CERT_FILE: ${garbage} holds no PEM certificate`);
    const error = refusal({ keyFile: garbage });
    expect(error.message).toBe(`GATEWAY_KEY_FILE: ${garbage} holds no unencrypted PEM private key`);
    expect(error.message).not.toContain('c2VjcmV0');
    const badCert = join(dir, 'bad-cert.pem');
    writeFileSync(badCert, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(refusal({ trustedCaFile: badCert }).message).toBe(`GATEWAY_TRUSTED_CA_FILE: ${badCert} holds a certificate that does not parse`);
  });
});

describe('gateway TLS options', () => {
  it('take a certificate and key together, and client-certificate auth only with a trusted CA', () => {
    expect(() => gatewayConfig({ certFile: '/a.crt' })).toThrow(/GATEWAY_CERT_FILE and GATEWAY_KEY_FILE go together/);
    expect(() => gatewayConfig({ trustedCaFile: '/ca.crt' })).toThrow(/GATEWAY_TRUSTED_CA_FILE needs GATEWAY_CERT_FILE/);
    expect(() => gatewayConfig({ certFile: '/a.crt', keyFile: '/a.key', clientCertAuth: true })).toThrow(/GATEWAY_CLIENT_CERT_AUTH needs GATEWAY_TRUSTED_CA_FILE/);
    expect(gatewayConfig({ certFile: '/a.crt', keyFile: '/a.key', trustedCaFile: '/ca.crt', clientCertAuth: true }).clientCertAuth).toBe(true);
    expect(() => gatewayConfig({ httpTls: true })).toThrow(/GATEWAY_HTTP_TLS needs GATEWAY_CERT_FILE and GATEWAY_KEY_FILE/);
    expect(() => gatewayConfig({ nodeTlsCertFile: '/g.crt', nodeTlsCaFile: '/ca.crt' })).toThrow(/GATEWAY_NODE_TLS_CERT_FILE, GATEWAY_NODE_TLS_KEY_FILE and GATEWAY_NODE_TLS_CA_FILE go together/);
  });

  it('read the raft-node channel files at start, naming a bad one', () => {
    expect(nodeTls(gatewayConfig())).toBeUndefined();
    const config = gatewayConfig({ nodeTlsCertFile: pki.clients['example.com']!.certFile, nodeTlsKeyFile: pki.server.keyFile, nodeTlsCaFile: pki.caFile });
    expect(() => nodeTls(config)).toThrow(`GATEWAY_NODE_TLS_KEY_FILE: ${pki.server.keyFile} is not the private key of the certificate in ${pki.clients['example.com']!.certFile}`);
    const good = gatewayConfig({ nodeTlsCertFile: pki.clients['example.com']!.certFile, nodeTlsKeyFile: pki.clients['example.com']!.keyFile, nodeTlsCaFile: pki.caFile });
    expect(nodeTls(good)?.credentials._isSecure()).toBe(true);
  });
});
