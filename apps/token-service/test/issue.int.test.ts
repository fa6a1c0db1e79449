// Issue against a real 3-member raft-node cluster and a real etcd-gateway process (verify-only
// JWT: it holds only the token-service's public key): the token-service applies Authenticate's
// rule and its tokens work on the gateway without any Authenticate call, over gRPC (`token`
// metadata) and the JSON gateway (`Authorization`), until an auth change makes them stale.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { EtcdGrpcClient, ROOT_PASSWORD, setupAuth, startWardCluster, type WardCluster } from '@ward/testing/etcd-harness';
import { createTokenService, tokenServiceConfig, type TokenService } from '../src/index';
import { TokenTestClient, capturingLogger, jwtPart } from './support';

const ALICE_PASSWORD = 'alice-pw-Zq81';
const AUTH_FAILED = 'etcdserver: authentication failed, invalid user ID or password';

let dir: string;
let ward: WardCluster;
let service: TokenService;
let tokens: TokenTestClient;
let etcd: EtcdGrpcClient;
let logLines: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'token-service-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  writeFileSync(join(dir, 'issuer.key'), privateKey, { mode: 0o600 });
  writeFileSync(join(dir, 'issuer.pub'), publicKey);
  ward = await startWardCluster({ bcryptCost: 4, authToken: `jwt,sign-method=EdDSA,pub-key=${join(dir, 'issuer.pub')}` });
  etcd = new EtcdGrpcClient(ward.clientEndpoint);
  await setupAuth(etcd, {
    roles: [{ name: 'app', permissions: [{ permType: 'READWRITE', key: 'app/', rangeEnd: 'app0' }] }],
    users: [{ name: 'alice', password: ALICE_PASSWORD, roles: ['app'] }],
    enable: false,
  });
  const enabled = await etcd.call('Auth', 'AuthEnable', {});
  expect(enabled.ok).toBe(true);
  const captured = capturingLogger('token-service');
  logLines = captured.lines;
  service = await createTokenService(
    tokenServiceConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [...ward.nodeApiEndpoints], privateKeyFile: join(dir, 'issuer.key'), bcryptCost: 4, logLevel: 'debug' }),
    { logger: captured.logger },
  );
  tokens = new TokenTestClient(service.grpcAddress);
});

afterAll(async () => {
  tokens?.close();
  etcd?.close();
  await service?.stop();
  await ward?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('token-service Issue', () => {
  it('mints a JWT with etcd claims, iss, aud, iat, jti and kid, verifiable with the published key set', async () => {
    const outcome = await tokens.issue('alice', ALICE_PASSWORD);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const { token, key_id: keyId, auth_revision: authRevision, expires_at_seconds: exp } = outcome.response;
    const header = jwtPart(token, 0);
    const claims = jwtPart(token, 1);
    expect(header).toEqual({ alg: 'EdDSA', kid: keyId, typ: 'JWT' });
    expect(claims).toMatchObject({ username: 'alice', revision: Number(authRevision), exp: Number(exp), iss: 'ward-token-service', aud: 'ward' });
    expect(typeof claims['jti']).toBe('string');
    expect(Number(exp) - (claims['iat'] as number)).toBe(300);
    const jwks = (await (await fetch(`${service.httpUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const verified = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: 'ward-token-service', audience: 'ward', algorithms: ['EdDSA'] });
    expect(verified.payload['username']).toBe('alice');
  });

  it('the token works on the gateway with no Authenticate call: gRPC `token` metadata and JSON `Authorization`', async () => {
    const token = await tokens.token('alice', ALICE_PASSWORD);
    const put = await etcd.call('KV', 'Put', { key: Buffer.from('app/a'), value: Buffer.from('1') }, { token });
    expect(put.ok).toBe(true);
    const denied = await etcd.call('KV', 'Put', { key: Buffer.from('other'), value: Buffer.from('1') }, { token });
    expect(denied).toMatchObject({ ok: false, code: 7, details: 'etcdserver: permission denied' });
    const response = await fetch(`${ward.jsonGatewayUrl}/v3/kv/range`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ key: Buffer.from('app/a').toString('base64') }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { kvs: Array<{ value: string }> };
    expect(Buffer.from(body.kvs[0]!.value, 'base64').toString()).toBe('1');
  });

  it.each([
    ['a wrong password', 'alice', 'not-the-password'],
    ['an unknown user', 'mallory', ALICE_PASSWORD],
    ['an empty name', '', ALICE_PASSWORD],
    ['a name that is not UTF-8', Buffer.from([0x61, 0xff]), ALICE_PASSWORD],
  ])('refuses %s with etcd’s Authenticate answer', async (_case, name, password) => {
    expect(await tokens.issue(name, password)).toEqual({ ok: false, code: 3, details: AUTH_FAILED });
  });

  it('a token older than an auth change is refused with etcd’s stale-revision error; a new Issue works', async () => {
    const old = await tokens.token('alice', ALICE_PASSWORD);
    const root = await tokens.token('root', ROOT_PASSWORD);
    const grant = await etcd.call('Auth', 'RoleGrantPermission', { name: 'app', perm: { permType: 'Read', key: Buffer.from('shared/'), range_end: Buffer.from('shared0') } }, { token: root });
    expect(grant.ok).toBe(true);
    const stale = await etcd.call('KV', 'Range', { key: Buffer.from('app/a') }, { token: old });
    expect(stale).toMatchObject({ ok: false, code: 3, details: 'etcdserver: revision of auth store is old' });
    const fresh = await tokens.token('alice', ALICE_PASSWORD);
    expect((await etcd.call('KV', 'Range', { key: Buffer.from('app/a') }, { token: fresh })).ok).toBe(true);
  });

  it('serves the key set with a cache lifetime, and the same keys over gRPC Keys', async () => {
    const response = await fetch(`${service.httpUrl}/.well-known/jwks.json`);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = (await response.json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const keys = await tokens.keys();
    expect(keys.ok && keys.response.keys.map((k) => k.key_id)).toEqual([jwks.keys[0]!['kid']]);
    for (const path of ['/healthz', '/readyz']) expect((await fetch(`${service.httpUrl}${path}`)).status).toBe(200);
    expect(await (await fetch(`${service.httpUrl}/metrics`)).text()).toMatch(/ward_token_service_issued_total\{outcome="issued"\} [1-9]/);
  });

  it('logs neither passwords nor tokens', async () => {
    const token = await tokens.token('alice', ALICE_PASSWORD);
    const text = logLines.join('');
    expect(text).toContain('token service started');
    for (const secret of [ALICE_PASSWORD, ROOT_PASSWORD, token, token.split('.')[2]!]) expect(text).not.toContain(secret);
  });
});
