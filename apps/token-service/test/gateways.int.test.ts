// Gateways that hand Authenticate to the token-service and verify its JWTs against the cluster's
// signing-key directory: real raft-nodes, two gateway processes, two token-service replicas that
// generate their own keys (nothing private shared). etcdctl 3.4 and the etcd3 client work
// unchanged; a token from either replica works on either gateway; one replica down, the other
// serves; a revoked key's tokens are refused on every gateway at their next request.
import { reservePorts } from '@ward/testing/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { signIssuedToken, type JwtKey } from '@ward/auth/tokens';
import { EtcdGrpcClient, ROOT_PASSWORD, runEtcdctl, setupAuth, startWardCluster, type ManagedProcess, type WardCluster } from '@ward/testing/etcd-harness';
import { createTokenService, tokenServiceConfig, type TokenService } from '../src/index';
import { TokenTestClient, capturingLogger, jwtPart, startGatewayProcess } from './support';

const ALICE_PASSWORD = 'alice-pw-Zq81';
const INVALID_TOKEN = 'etcdserver: invalid auth token';

let ward: WardCluster;
let second: { process: ManagedProcess; grpcEndpoint: string; httpUrl: string };
const replicas: TokenService[] = [];
const replicaLogs: string[][] = [];
let gatewayA: EtcdGrpcClient;
let gatewayB: EtcdGrpcClient;

async function startReplica(grpcPort: number): Promise<TokenService> {
  const { logger, lines } = capturingLogger(`token-service-${replicas.length + 1}`);
  replicaLogs.push(lines);
  const service = await createTokenService(
    tokenServiceConfig({ grpcPort, httpPort: 0, nodeEndpoints: [...ward.nodeApiEndpoints], bcryptCost: 4, rotationPeriodSeconds: 3600, logLevel: 'debug' }),
    { logger },
  );
  replicas.push(service);
  return service;
}

beforeAll(async () => {
  // The replicas' ports go into the gateways' settings long before the replicas bind them: they stay
  // held until then, so that no other test picks them meanwhile.
  const held = await reservePorts(2);
  const ports = held.map((reserved) => reserved.port);
  const tokenServiceEndpoints = ports.map((port) => `127.0.0.1:${port}`).join(',');
  const gatewayEnv = { GATEWAY_TOKEN_SERVICE_ENDPOINTS: tokenServiceEndpoints, GATEWAY_JWT_KEY_REFRESH_MIN_INTERVAL_MS: '200' };
  ward = await startWardCluster({ bcryptCost: 4, gatewayEnv });
  gatewayA = new EtcdGrpcClient(ward.clientEndpoint);
  await setupAuth(gatewayA, {
    roles: [{ name: 'app', permissions: [{ permType: 'READWRITE', key: 'app/', rangeEnd: 'app0' }] }],
    users: [{ name: 'alice', password: ALICE_PASSWORD, roles: ['app'] }],
    enable: false,
  });
  expect(await gatewayA.call('Auth', 'AuthEnable', {})).toMatchObject({ ok: true });
  for (const reserved of held) {
    await reserved.release();
    await startReplica(reserved.port);
  }
  second = await startGatewayProcess({ GATEWAY_NODE_ENDPOINTS: ward.nodeApiEndpoints.join(','), GATEWAY_BCRYPT_COST: '4', ...gatewayEnv });
  gatewayB = new EtcdGrpcClient(second.grpcEndpoint);
});

afterAll(async () => {
  gatewayA?.close();
  gatewayB?.close();
  await second?.process.stop();
  await Promise.allSettled(replicas.map((replica) => replica.stop()));
  await ward?.stop();
});

describe('gateways with a token-service', () => {
  it('Authenticate through a gateway returns a token-service JWT that works on every gateway', async () => {
    const token = await gatewayA.authenticate('alice', ALICE_PASSWORD);
    const header = jwtPart(token, 0);
    expect(header['alg']).toBe('EdDSA');
    const replicaKeys = replicas.flatMap((replica) => replica.keys.published().map((key) => key.keyId));
    expect(replicaKeys).toContain(header['kid']);
    expect(jwtPart(token, 1)).toMatchObject({ username: 'alice', iss: 'ward-token-service', aud: 'ward' });
    for (const gateway of [gatewayA, gatewayB]) {
      expect(await gateway.call('KV', 'Put', { key: Buffer.from('app/k'), value: Buffer.from('v') }, { token })).toMatchObject({ ok: true });
    }
    const body = await fetch(`${second.httpUrl}/v3/kv/range`, { method: 'POST', headers: { authorization: token }, body: JSON.stringify({ key: Buffer.from('app/k').toString('base64') }) });
    expect(body.status).toBe(200);
  });

  it('etcdctl 3.4 works unchanged through either gateway (its Authenticate is answered by the token-service)', async () => {
    const user = { name: 'alice', password: ALICE_PASSWORD };
    const put = await runEtcdctl({ endpoints: [ward.clientEndpoint], user, args: ['put', 'app/ctl', 'hello'] });
    expect(put).toMatchObject({ exitCode: 0, stdout: 'OK\n' });
    const get = await runEtcdctl({ endpoints: [second.grpcEndpoint], user, args: ['get', 'app/ctl', '--print-value-only'] });
    expect(get).toMatchObject({ exitCode: 0, stdout: 'hello\n' });
    const denied = await runEtcdctl({ endpoints: [second.grpcEndpoint], user, args: ['put', 'other', 'x'] });
    expect(denied.stderr).toContain('etcdserver: permission denied');
    const wrong = await runEtcdctl({ endpoints: [ward.clientEndpoint], user: { name: 'alice', password: 'nope' }, args: ['get', 'app/ctl'] });
    expect(wrong.stderr).toContain('etcdserver: authentication failed, invalid user ID or password');
  });

  it('the etcd3 client works unchanged', async () => {
    const client = new Etcd3({ hosts: `http://${second.grpcEndpoint}`, auth: { username: 'alice', password: ALICE_PASSWORD } });
    try {
      await client.put('app/etcd3').value('v3');
      expect(await client.get('app/etcd3').string()).toBe('v3');
    } finally {
      client.close();
    }
  });

  it('tokens of either replica verify on both gateways', async () => {
    for (const replica of replicas) {
      const tokens = new TokenTestClient(replica.grpcAddress);
      try {
        const token = await tokens.token('alice', ALICE_PASSWORD);
        expect(replica.keys.published().map((key) => key.keyId)).toContain(jwtPart(token, 0)['kid']);
        for (const gateway of [gatewayA, gatewayB]) expect(await gateway.call('KV', 'Range', { key: Buffer.from('app/k') }, { token })).toMatchObject({ ok: true });
      } finally {
        tokens.close();
      }
    }
  });

  it('each replica’s key set (JWKS and gRPC Keys) holds every replica’s keys, from the directory', async () => {
    const kids = (replica: TokenService) => replica.keys.published().map((key) => key.keyId);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const jwks = (await (await fetch(`${replicas[0]!.httpUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string; d?: unknown }> };
      const served = jwks.keys.map((key) => key.kid);
      if (kids(replicas[1]!).every((kid) => served.includes(kid))) {
        expect(served).toEqual(expect.arrayContaining(kids(replicas[0]!)));
        expect(jwks.keys.every((key) => key.d === undefined)).toBe(true);
        break;
      }
      if (Date.now() > deadline) throw new Error(`replica 1's JWKS lacks replica 2's keys: ${served.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const keys = new TokenTestClient(replicas[1]!.grpcAddress);
    try {
      const answer = await keys.keys();
      expect(answer.ok && answer.response.keys.map((key) => key.key_id)).toEqual(expect.arrayContaining([...kids(replicas[0]!), ...kids(replicas[1]!)]));
    } finally {
      keys.close();
    }
  });

  it('a revoked key: its tokens are refused on every gateway at once, and one forged with it later too', async () => {
    const victim = replicas[1]!;
    const tokens = new TokenTestClient(victim.grpcAddress);
    try {
      const before = await tokens.token('alice', ALICE_PASSWORD);
      const kid = jwtPart(before, 0)['kid'] as string;
      const stolen: JwtKey = victim.keys.published().find((key) => key.keyId === kid)!.key;
      // Both gateways have the key cached.
      for (const gateway of [gatewayA, gatewayB]) expect(await gateway.call('KV', 'Range', { key: Buffer.from('app/k') }, { token: before })).toMatchObject({ ok: true });
      // Revocation is admin-only (checked at apply), and goes through any replica.
      const other = new TokenTestClient(replicas[0]!.grpcAddress);
      try {
        expect(await other.revoke('alice', ALICE_PASSWORD, kid)).toEqual({ ok: false, code: 7, details: 'etcdserver: permission denied' });
        expect(await other.revoke('root', 'wrong', kid)).toEqual({ ok: false, code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' });
        expect((await other.revoke('root', ROOT_PASSWORD, kid)).ok).toBe(true);
      } finally {
        other.close();
      }
      for (const gateway of [gatewayA, gatewayB]) {
        const outcome = await gateway.call('KV', 'Range', { key: Buffer.from('app/k') }, { token: before });
        expect(outcome).toMatchObject({ ok: false, details: 'etcdserver: revision of auth store is old' });
      }
      // Someone holding the revoked private key mints a token at the current revision: refused.
      const status = await gatewayA.call<{ authRevision: string }>('Auth', 'AuthStatus', {});
      const revision = Number(status.ok ? status.response.authRevision : 0);
      const nowSeconds = Math.floor(Date.now() / 1000);
      const forged = await signIssuedToken(stolen, { username: 'alice', revision, issuer: 'ward-token-service', audience: 'ward', issuedAtSeconds: nowSeconds, expiresAtSeconds: nowSeconds + 60, jwtId: 'forged' });
      for (const gateway of [gatewayA, gatewayB]) {
        expect(await gateway.call('KV', 'Range', { key: Buffer.from('app/k') }, { token: forged })).toMatchObject({ ok: false, code: 16, details: INVALID_TOKEN });
      }
      // The victim replica notices and signs with a fresh key; its new tokens work.
      const fresh = await waitForToken(tokens, kid);
      expect(await gatewayB.call('KV', 'Range', { key: Buffer.from('app/k') }, { token: fresh })).toMatchObject({ ok: true });
    } finally {
      tokens.close();
    }
  });

  it('one replica stopped: the other serves Authenticate through the gateways', async () => {
    await replicas[0]!.stop();
    const token = await gatewayB.authenticate('alice', ALICE_PASSWORD);
    expect(replicas[1]!.keys.published().map((key) => key.keyId)).toContain(jwtPart(token, 0)['kid']);
    expect(await gatewayA.call('KV', 'Range', { key: Buffer.from('app/k') }, { token })).toMatchObject({ ok: true });
  });

  it('no password, token or private key in any log line', () => {
    const text = [...replicaLogs.flat(), ward.gateway.output(), second.process.output(), ...ward.nodes.map((node) => node.output())].join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [ALICE_PASSWORD, ROOT_PASSWORD, 'PRIVATE KEY', '"d":']) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  });
});

/** Issues until the token is signed by a key other than `revokedKid` (the replica checks the directory every 2 s). */
async function waitForToken(tokens: TokenTestClient, revokedKid: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const outcome = await tokens.issue('alice', ALICE_PASSWORD);
    if (outcome.ok && jwtPart(outcome.response.token, 0)['kid'] !== revokedKid) return outcome.response.token;
    if (Date.now() > deadline) throw new Error('the replica kept signing with the revoked key');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
