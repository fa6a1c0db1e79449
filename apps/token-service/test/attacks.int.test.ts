// The attack corpus against real processes: a gateway verifying token-service JWTs from the
// cluster's key directory. Every forged or unfit token is refused with etcd's `invalid auth token`
// (or, for a token older than an auth change, `revision of auth store is old`); headers pointing
// at a key URL are never followed (a local server stands ready and is never contacted); no process
// crashes. The forgeries are built with node:crypto; the legitimate key is an operator's file, so
// tokens can be signed with exactly the key the gateways trust.
import { reservePorts, type HeldPort } from '@ward/testing/cluster';
import { createHmac, createPrivateKey, generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, ROOT_PASSWORD, setupAuth, startWardCluster, type WardCluster } from '@ward/testing/etcd-harness';
import { createTokenService, tokenServiceConfig, type TokenService } from '../src/index';
import { TokenTestClient, capturingLogger } from './support';

const ALICE_PASSWORD = 'alice-pw-Zq81';
const INVALID = { ok: false, code: 16, details: 'etcdserver: invalid auth token' };
const STALE = { ok: false, code: 3, details: 'etcdserver: revision of auth store is old' };

let dir: string;
let ward: WardCluster;
let service: TokenService;
let gateway: EtcdGrpcClient;
let tokens: TokenTestClient;
let keyServer: Server;
let keyServerHits = 0;
let keyUrl: string;
let legitPem: string;
let kid: string;

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const nowS = (): number => Math.floor(Date.now() / 1000);

/** A JWS over `header.payload` with node:crypto: EdDSA, ES256 (P1363), RS256 or HS256. */
function forge(header: Record<string, unknown>, payload: unknown, signer: { pem?: string; hmac?: Buffer; none?: true }): string {
  const input = `${b64(header)}.${b64(payload)}`;
  if (signer.none) return `${input}.`;
  if (signer.hmac !== undefined) return `${input}.${createHmac('sha256', signer.hmac).update(input).digest('base64url')}`;
  const key = createPrivateKey(signer.pem!);
  const alg = header['alg'];
  const signature =
    alg === 'EdDSA' ? nodeSign(null, Buffer.from(input), key) : nodeSign('sha256', Buffer.from(input), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
}

async function claims(overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const status = await gateway.call<{ authRevision: string }>('Auth', 'AuthStatus', {});
  const revision = Number(status.ok ? status.response.authRevision : 0);
  return { username: 'alice', revision, exp: nowS() + 120, iss: 'ward-token-service', aud: 'ward', iat: nowS(), jti: 'x', ...overrides };
}

const legit = (extra: Record<string, unknown> = {}) => ({ alg: 'EdDSA', kid, typ: 'JWT', ...extra });
const range = (token: string) => gateway.call('KV', 'Range', { key: Buffer.from('app/a') }, { token });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'token-attacks-'));
  const pair = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  legitPem = pair.privateKey;
  writeFileSync(join(dir, 'issuer.key'), legitPem, { mode: 0o600 });
  keyServer = createServer((_request, response) => {
    keyServerHits += 1;
    response.end(JSON.stringify({ keys: [] }));
  });
  await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  keyUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/keys.json`;
  // Held until the token-service binds it, after the cluster started: no other test picks it meanwhile.
  const [reserved] = (await reservePorts(1)) as [HeldPort];
  const port = reserved.port;
  ward = await startWardCluster({ bcryptCost: 4, gatewayEnv: { GATEWAY_TOKEN_SERVICE_ENDPOINTS: `127.0.0.1:${port}` } });
  gateway = new EtcdGrpcClient(ward.clientEndpoint);
  await setupAuth(gateway, {
    roles: [{ name: 'app', permissions: [{ permType: 'READWRITE', key: 'app/', rangeEnd: 'app0' }] }],
    users: [
      { name: 'alice', password: ALICE_PASSWORD, roles: ['app'] },
      { name: 'bob', password: ALICE_PASSWORD, roles: ['app'] },
    ],
    enable: false,
  });
  expect((await gateway.call('Auth', 'AuthEnable', {})).ok).toBe(true);
  await reserved.release();
  service = await createTokenService(
    tokenServiceConfig({ grpcPort: port, httpPort: 0, nodeEndpoints: [...ward.nodeApiEndpoints], bcryptCost: 4, privateKeyFile: join(dir, 'issuer.key'), keyId: 'operator-1' }),
    { logger: capturingLogger('token-service').logger },
  );
  kid = 'operator-1';
  tokens = new TokenTestClient(service.grpcAddress);
});

afterAll(async () => {
  tokens?.close();
  gateway?.close();
  await service?.stop();
  await ward?.stop();
  keyServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('attack corpus through a gateway (token-service keys from the directory)', () => {
  it('the baseline: a token signed with the trusted key by hand is accepted', async () => {
    expect((await range(forge(legit(), await claims(), { pem: legitPem }))).ok).toBe(true);
  });

  it('alg none, HS/EdDSA and ES/EdDSA confusion, RS with the trusted kid: all refused', async () => {
    const attacker = generateKeyPairSync('ec', { namedCurve: 'prime256v1', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const publicJwk = (await (await fetch(`${service.httpUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ x: string }> };
    const payload = await claims();
    const forged = [
      forge({ alg: 'none', kid, typ: 'JWT' }, payload, { none: true }),
      forge({ alg: 'HS256', kid, typ: 'JWT' }, payload, { hmac: Buffer.from(publicJwk.keys[0]!.x, 'base64url') }),
      forge({ alg: 'HS256', kid, typ: 'JWT' }, payload, { hmac: Buffer.from(createPrivateKey(legitPem).export({ format: 'jwk' }).x as string, 'base64url') }),
      forge({ alg: 'ES256', kid, typ: 'JWT' }, payload, { pem: attacker.privateKey }),
      forge({ alg: 'RS256', kid, typ: 'JWT' }, payload, { pem: rsa.privateKey }),
    ];
    for (const token of forged) expect(await range(token)).toMatchObject(INVALID);
  });

  it('unknown, oversized and injected kids are refused', async () => {
    const payload = await claims();
    for (const badKid of ['nobody', 'k'.repeat(5000), '../../../etc/passwd', "x' OR '1'='1", '%00', '\u202e']) {
      expect(await range(forge(legit({ kid: badKid }), payload, { pem: legitPem }))).toMatchObject(INVALID);
    }
  });

  it('jku, x5u, jwk and x5c are refused, and the URLs are never contacted', async () => {
    const payload = await claims();
    const attacker = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const attackerJwk = createPrivateKey(attacker.privateKey).export({ format: 'jwk' });
    const forged = [
      forge(legit({ jku: keyUrl }), payload, { pem: legitPem }),
      forge(legit({ x5u: keyUrl }), payload, { pem: legitPem }),
      forge({ alg: 'EdDSA', kid: 'attacker', jku: keyUrl }, payload, { pem: attacker.privateKey }),
      forge({ alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x: attackerJwk.x } }, payload, { pem: attacker.privateKey }),
      forge(legit({ x5c: ['MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'] }), payload, { pem: legitPem }),
    ];
    for (const token of forged) expect(await range(token)).toMatchObject(INVALID);
    expect(keyServerHits).toBe(0);
  });

  it('expired, future nbf, future iat, wrong iss, wrong aud, tampered claims: refused', async () => {
    const good = await claims();
    const cases = [
      { ...good, exp: nowS() - 120 },
      { ...good, nbf: nowS() + 600 },
      { ...good, iat: nowS() + 600 },
      { ...good, iss: 'https://someone-else' },
      { ...good, aud: 'not-ward' },
    ];
    for (const payload of cases) expect(await range(forge(legit(), payload, { pem: legitPem }))).toMatchObject(INVALID);
    const [header, , signature] = forge(legit(), good, { pem: legitPem }).split('.');
    expect(await range(`${header}.${b64({ ...good, username: 'root' })}.${signature}`)).toMatchObject(INVALID);
  });

  it('a deleted user’s token and a token older than a role change get etcd’s stale-revision error', async () => {
    const root = await tokens.token('root', ROOT_PASSWORD);
    const bob = await tokens.token('bob', ALICE_PASSWORD);
    const alice = await tokens.token('alice', ALICE_PASSWORD);
    expect((await gateway.call('Auth', 'UserDelete', { name: 'bob' }, { token: root })).ok).toBe(true);
    expect(await gateway.call('KV', 'Range', { key: Buffer.from('app/a') }, { token: bob })).toMatchObject(STALE);
    expect(await gateway.call('KV', 'Range', { key: Buffer.from('app/a') }, { token: alice })).toMatchObject(STALE);
    expect(await tokens.issue('bob', ALICE_PASSWORD)).toMatchObject({ ok: false, code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' });
  });

  it('no process crashed', () => {
    expect(ward.allAlive()).toBe(true);
  });
});
