// Key rotation under load for a minute (the test): one token-service replica rotating
// its key every 2 s (tokens live 3 s), clients looping across two gateways — each holds a token,
// fetches a fresh one through Authenticate before it expires, and writes and reads with it. No
// request may fail while keys come and go; a key that retired (its last token's lifetime and the
// tolerance over) no longer verifies anything, even a token that has not expired.
import { reservePorts, type HeldPort } from '@ward/testing/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIssuedToken } from '@ward/auth/tokens';
import { EtcdGrpcClient, setupAuth, startWardCluster, type ManagedProcess, type WardCluster } from '@ward/testing/etcd-harness';
import { createTokenService, tokenServiceConfig, type ScheduledKey, type TokenService } from '../src/index';
import { capturingLogger, jwtPart, startGatewayProcess } from './support';

const ALICE_PASSWORD = 'alice-pw-Zq81';
const LOOP_MS = 60_000;
const PERIOD_SECONDS = 2;
const TTL_SECONDS = 3;
const TOLERANCE_SECONDS = 1;

let ward: WardCluster;
let second: { process: ManagedProcess; grpcEndpoint: string };
let service: TokenService;
let firstKey: ScheduledKey;

beforeAll(async () => {
  // Held until the token-service binds it, after the cluster started: no other test picks it meanwhile.
  const [reserved] = (await reservePorts(1)) as [HeldPort];
  const port = reserved.port;
  const gatewayEnv = { GATEWAY_TOKEN_SERVICE_ENDPOINTS: `127.0.0.1:${port}`, GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS: String(TOLERANCE_SECONDS) };
  ward = await startWardCluster({ bcryptCost: 4, gatewayEnv });
  const admin = new EtcdGrpcClient(ward.clientEndpoint);
  try {
    await setupAuth(admin, { roles: [{ name: 'app', permissions: [{ permType: 'READWRITE', key: 'app/', rangeEnd: 'app0' }] }], users: [{ name: 'alice', password: ALICE_PASSWORD, roles: ['app'] }], enable: false });
    expect((await admin.call('Auth', 'AuthEnable', {})).ok).toBe(true);
  } finally {
    admin.close();
  }
  await reserved.release();
  service = await createTokenService(
    tokenServiceConfig({
      grpcPort: port,
      httpPort: 0,
      nodeEndpoints: [...ward.nodeApiEndpoints],
      bcryptCost: 4,
      rotationPeriodSeconds: PERIOD_SECONDS,
      ttlSeconds: TTL_SECONDS,
      clockToleranceSeconds: TOLERANCE_SECONDS,
    }),
    { logger: capturingLogger('token-service').logger },
  );
  firstKey = await service.keys.signingKey();
  second = await startGatewayProcess({ GATEWAY_NODE_ENDPOINTS: ward.nodeApiEndpoints.join(','), GATEWAY_BCRYPT_COST: '4', ...gatewayEnv });
});

afterAll(async () => {
  await second?.process.stop();
  await service?.stop();
  await ward?.stop();
});

/** One client on one gateway: refreshes its token before expiry, writes and reads in a loop. */
async function clientLoop(endpoint: string, name: string, untilMs: number): Promise<{ requests: number; failures: string[]; kids: Set<string> }> {
  const client = new EtcdGrpcClient(endpoint);
  const failures: string[] = [];
  const kids = new Set<string>();
  let requests = 0;
  let token = '';
  let refreshAtMs = 0;
  try {
    for (let i = 0; Date.now() < untilMs; i++) {
      if (Date.now() >= refreshAtMs) {
        requests += 1;
        const outcome = await client.call<{ token: string }>('Auth', 'Authenticate', { name: 'alice', password: ALICE_PASSWORD });
        if (!outcome.ok) {
          failures.push(`Authenticate: ${outcome.code} ${outcome.details}`);
          continue;
        }
        token = outcome.response.token;
        kids.add(jwtPart(token, 0)['kid'] as string);
        // Fetch a fresh token a second before this one expires, as a client should.
        refreshAtMs = (jwtPart(token, 1)['exp'] as number) * 1000 - 1000;
      }
      const key = Buffer.from(`app/${name}/${i % 10}`);
      for (const [service, method, body] of [
        ['KV', 'Put', { key, value: Buffer.from(String(i)) }],
        ['KV', 'Range', { key }],
      ] as const) {
        requests += 1;
        const outcome = await client.call(service, method, body, { token });
        if (!outcome.ok) failures.push(`${method}: ${outcome.code} ${outcome.details}`);
      }
    }
  } finally {
    client.close();
  }
  return { requests, failures, kids };
}

describe('rotation under load', () => {
  it('keys rotate every 2 s for a minute across two gateways: no request fails', async () => {
    const untilMs = Date.now() + LOOP_MS;
    const results = await Promise.all([
      clientLoop(ward.clientEndpoint, 'a1', untilMs),
      clientLoop(ward.clientEndpoint, 'a2', untilMs),
      clientLoop(second.grpcEndpoint, 'b1', untilMs),
      clientLoop(second.grpcEndpoint, 'b2', untilMs),
    ]);
    const kids = new Set(results.flatMap((result) => [...result.kids]));
    expect(results.flatMap((result) => result.failures)).toEqual([]);
    expect(results.reduce((sum, result) => sum + result.requests, 0)).toBeGreaterThan(200);
    // 20 s at one key per 2 s: the tokens were signed by many keys.
    expect(kids.size).toBeGreaterThanOrEqual(6);
  });

  it('a retired key verifies nothing once its grace is over, even an unexpired token', async () => {
    // By now the first key stopped signing long ago and its retire time (+ tolerance) has passed.
    expect(Date.now()).toBeGreaterThan(firstKey.retireAfterMs + TOLERANCE_SECONDS * 1000);
    expect(service.keys.published().map((key) => key.keyId)).not.toContain(firstKey.keyId);
    const admin = new EtcdGrpcClient(ward.clientEndpoint);
    const status = await admin.call<{ authRevision: string }>('Auth', 'AuthStatus', {});
    admin.close();
    const nowSeconds = Math.floor(Date.now() / 1000);
    const late = await signIssuedToken(firstKey.key, {
      username: 'alice',
      revision: Number(status.ok ? status.response.authRevision : 0),
      issuer: 'ward-token-service',
      audience: 'ward',
      issuedAtSeconds: nowSeconds,
      expiresAtSeconds: nowSeconds + 60,
      jwtId: 'late',
    });
    for (const endpoint of [ward.clientEndpoint, second.grpcEndpoint]) {
      const client = new EtcdGrpcClient(endpoint);
      try {
        expect(await client.call('KV', 'Range', { key: Buffer.from('app/x') }, { token: late })).toMatchObject({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
      } finally {
        client.close();
      }
    }
  });
});
