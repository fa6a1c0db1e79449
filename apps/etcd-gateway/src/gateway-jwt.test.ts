// JWT gateways in front of a one-member applier node: etcd's claims, stale revisions, verify-only
// mode with externally minted tokens, key rotation, and the token types not mixing.
import { createSign, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig, type GatewayConfig } from './config';
import { createGateway, type Gateway } from './gateway';
import { startApplierNode, type ApplierNode } from './testing/applier-node';
import { enableAuthAsRoot, etcdTestClient, type EtcdTestClient } from './testing/etcd-client';

const b = (text: string): Buffer => Buffer.from(text);
const logger = createLogger({ name: 'test', level: 'silent' });

let dir: string;
let node: ApplierNode;
const gateways: Gateway[] = [];
const clients: EtcdTestClient[] = [];
let keys: { current: { priv: string; pub: string }; previous: { priv: string; pub: string } };

function pemPair(): { priv: string; pub: string } {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { priv: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), pub: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

function mint(privateKeyPem: string, payload: object): string {
  const input = `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKeyPem).toString('base64url')}`;
}

async function gatewayWith(overrides: Partial<GatewayConfig>): Promise<EtcdTestClient> {
  const gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, logLevel: 'silent', ...overrides }), { logger });
  gateways.push(gateway);
  const client = etcdTestClient(gateway.grpcAddress);
  clients.push(client);
  return client;
}

async function must<T = Record<string, unknown>>(etcd: EtcdTestClient, service: Parameters<EtcdTestClient['call']>[0], method: string, request: object, token?: string): Promise<T> {
  const result = await etcd.call<T>(service, method, request, token);
  if (!result.ok) throw new Error(`${method}: ${result.details}`);
  return result.value;
}

let issuing: EtcdTestClient;
let verifyOnly: EtcdTestClient;
let simple: EtcdTestClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ward-jwt-'));
  keys = { current: pemPair(), previous: pemPair() };
  await writeFile(join(dir, 'priv.pem'), keys.current.priv);
  await writeFile(join(dir, 'pub.pem'), keys.current.pub);
  await writeFile(join(dir, 'previous.pub.pem'), keys.previous.pub);
  node = await startApplierNode();
  issuing = await gatewayWith({ authToken: `jwt,sign-method=RS256,priv-key=${join(dir, 'priv.pem')},pub-key=${join(dir, 'pub.pem')},ttl=10m` });
  verifyOnly = await gatewayWith({ authToken: `jwt,sign-method=RS256,pub-key=${join(dir, 'pub.pem')}`, jwtVerificationKeyFiles: [join(dir, 'previous.pub.pem')] });
  simple = await gatewayWith({});
  await enableAuthAsRoot(issuing, 'root-pw');
});

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await node?.stop();
  await rm(dir, { recursive: true, force: true });
});

function claimsOf(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return { header: JSON.parse(Buffer.from(header!, 'base64url').toString()), payload: JSON.parse(Buffer.from(payload!, 'base64url').toString()) };
}

describe('JWT gateways', () => {
  it('issue etcd’s token: header {alg, typ}, claims {exp, revision, username}', async () => {
    const { token } = await must<{ token: string }>(issuing, 'Auth', 'Authenticate', { name: 'root', password: 'root-pw' });
    const { header, payload } = claimsOf(token);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(Object.keys(payload).sort()).toEqual(['exp', 'revision', 'username']);
    expect(payload['username']).toBe('root');
    expect(payload['revision']).toBe(node.applier.authView.revision);
    expect(payload['exp']).toBeGreaterThan(Date.now() / 1000 + 590);
    expect((await issuing.call('KV', 'Put', { key: b('k'), value: b('v') }, token)).ok).toBe(true);
  });

  it('a token older than an auth change: KV refused with `revision of auth store is old`, admin ops still pass (etcd)', async () => {
    const { token } = await must<{ token: string }>(issuing, 'Auth', 'Authenticate', { name: 'root', password: 'root-pw' });
    await must(issuing, 'Auth', 'RoleAdd', { name: `bump-${Date.now()}` }, token);
    expect(await issuing.call('KV', 'Put', { key: b('k'), value: b('v') }, token)).toEqual({ ok: false, code: 3, details: 'etcdserver: revision of auth store is old' });
    expect((await issuing.call('Auth', 'UserList', {}, token)).ok).toBe(true);
  });

  it('verify-only: accepts a token minted elsewhere with the key, refuses to issue (Unknown, etcd’s text)', async () => {
    const { authRevision } = await must<{ authRevision: string }>(verifyOnly, 'Auth', 'AuthStatus', {});
    const minted = mint(keys.current.priv, { username: 'root', revision: Number(authRevision), exp: Math.floor(Date.now() / 1000) + 60 });
    expect((await verifyOnly.call('KV', 'Put', { key: b('external'), value: b('v') }, minted)).ok).toBe(true);
    expect(await verifyOnly.call('Auth', 'Authenticate', { name: 'root', password: 'root-pw' })).toEqual({ ok: false, code: 2, details: 'auth: token signing attempted with verify-only key' });
  });

  it('key rotation: a token signed by the previous key is accepted where that key is configured, only there', async () => {
    const { authRevision } = await must<{ authRevision: string }>(verifyOnly, 'Auth', 'AuthStatus', {});
    const old = mint(keys.previous.priv, { username: 'root', revision: Number(authRevision), exp: Math.floor(Date.now() / 1000) + 60 });
    expect((await verifyOnly.call('KV', 'Range', { key: b('k') }, old)).ok).toBe(true);
    expect(await issuing.call('KV', 'Range', { key: b('k') }, old)).toEqual({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
  });

  it('an expired token is refused as `invalid auth token`, and authenticating again works (row 53, TestAuthJWTExpire)', async () => {
    const { authRevision } = await must<{ authRevision: string }>(issuing, 'Auth', 'AuthStatus', {});
    const nowS = Math.floor(Date.now() / 1000);
    const live = mint(keys.current.priv, { username: 'root', revision: Number(authRevision), exp: nowS + 60 });
    const expired = mint(keys.current.priv, { username: 'root', revision: Number(authRevision), exp: nowS - 3600 });
    expect((await issuing.call('KV', 'Put', { key: b('jwt-expire'), value: b('v1') }, live)).ok).toBe(true);
    expect(await issuing.call('KV', 'Put', { key: b('jwt-expire'), value: b('v2') }, expired)).toEqual({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
    const { token } = await must<{ token: string }>(issuing, 'Auth', 'Authenticate', { name: 'root', password: 'root-pw' });
    expect((await issuing.call('KV', 'Put', { key: b('jwt-expire'), value: b('v3') }, token)).ok).toBe(true);
    const read = await must<{ kvs: Array<{ value: Buffer }> }>(issuing, 'KV', 'Range', { key: b('jwt-expire') }, token);
    expect(read.kvs.map((kv) => kv.value.toString())).toEqual(['v3']);
  });

  it('token types do not mix: a JWT at a simple-token gateway and a simple token at a JWT gateway are invalid', async () => {
    const { token: jwt } = await must<{ token: string }>(issuing, 'Auth', 'Authenticate', { name: 'root', password: 'root-pw' });
    const { token: simpleToken } = await must<{ token: string }>(simple, 'Auth', 'Authenticate', { name: 'root', password: 'root-pw' });
    expect(simpleToken).toMatch(/^[A-Za-z]{16}\.\d+$/);
    expect(await simple.call('KV', 'Range', { key: b('k') }, jwt)).toMatchObject({ ok: false, code: 16 });
    expect(await issuing.call('KV', 'Range', { key: b('k') }, simpleToken)).toMatchObject({ ok: false, code: 16 });
  });
});
