import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, importPKCS8 } from 'jose';

/** An RSA key pair written to PEM files, as etcd's `--auth-token jwt,...` and ward's gateway take them. */
export interface JwtKeyFiles {
  readonly dir: string;
  readonly privateKeyPath: string;
  readonly publicKeyPath: string;
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

/** Generates an RSA-2048 key pair into a fresh temp directory. */
export async function writeRsaKeyFiles(): Promise<JwtKeyFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'ward-jwt-'));
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privateKeyPath = join(dir, 'jwt.key');
  const publicKeyPath = join(dir, 'jwt.pub');
  await writeFile(privateKeyPath, privateKeyPem, { mode: 0o600 });
  await writeFile(publicKeyPath, publicKeyPem);
  return { dir, privateKeyPath, publicKeyPath, privateKeyPem, publicKeyPem };
}

/** etcd's claims: username, revision, exp (seconds). `extra` may override or add any claim. */
export interface EtcdClaims {
  readonly username?: unknown;
  readonly revision?: unknown;
  readonly exp?: number;
  readonly [claim: string]: unknown;
}

const b64url = (value: string | Uint8Array): string => Buffer.from(value).toString('base64url');

/** Signs claims with RS256 and the given private key PEM (a legitimate or a foreign key). */
export async function signRs256(privateKeyPem: string, claims: EtcdClaims): Promise<string> {
  const key = await importPKCS8(privateKeyPem, 'RS256');
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(key);
}

/** `alg: none` with an empty signature (RFC 7519 unsecured JWT). */
export function unsecuredJwt(claims: EtcdClaims): string {
  return `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}.`;
}

/** HS256 keyed with the server's RSA public key PEM: the classic RS/HS key-confusion forgery. */
export async function keyConfusionJwt(publicKeyPem: string, claims: EtcdClaims): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(publicKeyPem));
}

/** A valid token with its payload swapped for other claims (signature left as it was). */
export function tamperedJwt(token: string, claims: EtcdClaims): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64url(JSON.stringify(claims))}.${signature}`;
}

/** Seconds since the epoch, `offsetSeconds` from now. */
export function epochSeconds(offsetSeconds = 0): number {
  return Math.floor(Date.now() / 1000) + offsetSeconds;
}
