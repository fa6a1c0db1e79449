// An outside JWT authority trusted for verification only (the seeds' "directly setting JWT tokens"
// workflow): it mints etcd-claim tokens for ward's users; clients send them without ever calling
// Authenticate (gRPC `token` metadata, JSON `Authorization`), and after expiry read the auth
// revision from AuthStatus without a token to get a fresh one. Keys come from the issuer's JWKS
// URL (configured, never taken from a token; fetched rate-bounded) or a key file; iss, aud and
// the algorithm allow-list are enforced. Real 3-member cluster, in-process gateway, simple tokens
// for everyone else.
import { generateKeyPairSync, sign as nodeSign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';
import type { EtcdTestClient } from '../src/testing/etcd-client';

const IDP = 'https://idp.example';
const FILE_IDP = 'https://file-idp.example';
const INVALID = { ok: false, code: 16, details: 'etcdserver: invalid auth token' };

let dir: string;
let ward: WardCluster;
let etcd: EtcdTestClient;
let jwksServer: Server;
let jwksHits = 0;
let jwks: { keys: object[] } = { keys: [] };
const es1 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const es2 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const ed = generateKeyPairSync('ed25519');

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowS = (): number => Math.floor(Date.now() / 1000);

function mint(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = header['alg'] === 'EdDSA' ? nodeSign(null, Buffer.from(input), key) : nodeSign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function jwkOf(publicKey: KeyObject, kid: string, alg: string): object {
  return { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}

async function revision(): Promise<number> {
  const status = await must<{ authRevision: string }>(etcd.call('Auth', 'AuthStatus', {}), 'AuthStatus');
  return Number(status.authRevision);
}

async function claims(overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  return { iss: IDP, aud: 'ward', username: 'alice', revision: await revision(), exp: nowS() + 120, iat: nowS(), ...overrides };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'external-issuer-'));
  jwks = { keys: [jwkOf(es1.publicKey, 'idp-1', 'ES256')] };
  jwksServer = createServer((_request, response) => {
    jwksHits += 1;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  writeFileSync(join(dir, 'file-idp.pub'), ed.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(
    join(dir, 'issuers.json'),
    JSON.stringify([
      { issuer: IDP, audience: 'ward', algorithms: ['ES256'], jwksUrl: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json` },
      { issuer: FILE_IDP, audience: 'ward', algorithms: ['EdDSA'], keyFile: join(dir, 'file-idp.pub'), keyId: 'file-1' },
    ]),
  );
  ward = await startWardCluster({ gateway: { jwtExternalIssuersFile: join(dir, 'issuers.json'), jwtExternalRefreshMinIntervalMs: 500, jwtClockToleranceSeconds: 5 } });
  etcd = ward.client();
  await setUpAuth(etcd, { rootPassword: 'root-pw', user: 'alice', password: 'alice-pw', prefix: 'app/' });
});

afterAll(async () => {
  await ward?.stop();
  jwksServer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an outside issuer, verify-only', () => {
  it('its token works with no Authenticate call: gRPC token metadata and the JSON gateway’s Authorization', async () => {
    const token = mint({ alg: 'ES256', kid: 'idp-1', typ: 'JWT' }, await claims(), es1.privateKey);
    expect((await etcd.call('KV', 'Put', { key: Buffer.from('app/ext'), value: Buffer.from('1') }, token)).ok).toBe(true);
    expect(await etcd.call('KV', 'Put', { key: Buffer.from('other'), value: Buffer.from('1') }, token)).toMatchObject({ ok: false, code: 7 });
    const response = await ward.gateways[0]!.injectHttp({ method: 'POST', url: '/v3/kv/range', headers: { authorization: token }, payload: { key: Buffer.from('app/ext').toString('base64') } });
    expect(response.statusCode).toBe(200);
    const fileToken = mint({ alg: 'EdDSA', kid: 'file-1', typ: 'JWT' }, await claims({ iss: FILE_IDP }), ed.privateKey);
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, fileToken)).ok).toBe(true);
  });

  it('wrong aud, another issuer’s iss, an algorithm off the list: refused', async () => {
    const payload = await claims();
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, mint({ alg: 'ES256', kid: 'idp-1' }, { ...payload, aud: 'elsewhere' }, es1.privateKey))).toMatchObject(INVALID);
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, mint({ alg: 'EdDSA', kid: 'file-1' }, payload, ed.privateKey))).toMatchObject(INVALID);
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, mint({ alg: 'EdDSA', kid: 'file-1' }, { ...payload, iss: FILE_IDP, aud: 'x' }, ed.privateKey))).toMatchObject(INVALID);
  });

  it('unknown kids do not make the gateway hammer the issuer; a rotated-in key is found', async () => {
    const payload = await claims();
    const before = jwksHits;
    for (let i = 0; i < 50; i++) {
      expect(await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, mint({ alg: 'ES256', kid: `junk-${i}` }, payload, es2.privateKey))).toMatchObject(INVALID);
    }
    expect(jwksHits - before).toBeLessThanOrEqual(2);
    jwks = { keys: [jwkOf(es1.publicKey, 'idp-1', 'ES256'), jwkOf(es2.publicKey, 'idp-2', 'ES256')] };
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, mint({ alg: 'ES256', kid: 'idp-2' }, payload, es2.privateKey))).ok).toBe(true);
  });

  it('after expiry, AuthStatus without a token gives the revision a fresh token needs', async () => {
    const expired = mint({ alg: 'ES256', kid: 'idp-1' }, await claims({ exp: nowS() - 60 }), es1.privateKey);
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, expired)).toMatchObject(INVALID);
    expect(await etcd.call('Auth', 'AuthStatus', {}, expired)).toMatchObject(INVALID);
    const status = await must<{ enabled: boolean; authRevision: string }>(etcd.call('Auth', 'AuthStatus', {}), 'AuthStatus');
    expect(status.enabled).toBe(true);
    const fresh = mint({ alg: 'ES256', kid: 'idp-1' }, await claims({ revision: Number(status.authRevision) }), es1.privateKey);
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, fresh)).ok).toBe(true);
  });

  it('simple tokens keep working next to it', async () => {
    const login = await must<{ token: string }>(etcd.call('Auth', 'Authenticate', { name: 'alice', password: 'alice-pw' }));
    expect(login.token).toMatch(/^[a-zA-Z]{16}\.\d+$/);
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('app/ext') }, login.token)).ok).toBe(true);
  });
});
