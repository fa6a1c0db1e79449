// The gateway on the BullMQ password tier: real Redis (127.0.0.1:6379) and a real
// password-verifier process hash and verify; nothing in Redis holds a plaintext password. An
// unreachable Redis at boot falls back to bcrypt in process only when that fallback is asked for
// (password-tier-outage.int.test.ts covers the default: not ready, `unhealthy cluster`).
import type { ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import { createLogger } from '@ward/platform/logging';
import { connectTestRedis, deleteKeys, dumpKeys, uniquePrefix } from '@ward/testing/redis';
import { createGateway, gatewayConfig, type Gateway } from '../src/index';
import { startApplierNode, type ApplierNode } from '../src/testing/applier-node';
import { etcdTestClient, type EtcdTestClient } from '../src/testing/etcd-client';
import { startPasswordVerifier } from './support/password-verifier';

const redis = connectTestRedis('etcd-gateway-int');
const prefix = uniquePrefix('gateway');
const keyRing = generateSealingKeyEntry('k1');
const PASSWORDS = { root: 'Queue-root-7f3a19', grace: 'Queue-grace-c04e82' };

let node: ApplierNode;
let worker: ChildProcess;
let gateway: Gateway;
let etcd: EtcdTestClient;


beforeAll(async () => {
  node = await startApplierNode();
  worker = await startPasswordVerifier(keyRing, prefix);
  gateway = await createGateway(
    gatewayConfig({
      grpcPort: 0,
      httpPort: 0,
      nodeEndpoints: [node.address],
      redisUrl: 'redis://127.0.0.1:6379/0',
      passwordPayloadKeys: keyRing,
      passwordQueuePrefix: prefix,
      logLevel: 'silent',
    }),
    { logger: createLogger({ name: 'test', level: 'silent' }) },
  );
  etcd = etcdTestClient(gateway.grpcAddress);
}, 120_000);

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  worker?.kill('SIGKILL');
  await node?.stop();
  await deleteKeys(redis, `${prefix}:*`);
  await redis.quit();
});

async function must(method: string, request: object, token?: string): Promise<Record<string, unknown>> {
  const result = await etcd.call('Auth', method, request, token);
  if (!result.ok) throw new Error(`${method}: ${result.details}`);
  return result.value;
}

describe('the BullMQ password tier behind the gateway', () => {
  it('hashes and verifies on the worker: users, auth enable, Authenticate', async () => {
    expect(gateway.passwordTier).toBe('queue');
    await must('UserAdd', { name: 'root', password: PASSWORDS.root });
    await must('UserGrantRole', { user: 'root', role: 'root' });
    await must('AuthEnable', {});
    const root = (await must('Authenticate', { name: 'root', password: PASSWORDS.root }))['token'] as string;
    await must('UserAdd', { name: 'grace', password: PASSWORDS.grace }, root);
    expect((await must('Authenticate', { name: 'grace', password: PASSWORDS.grace }))['token']).toMatch(/^[A-Za-z]{16}\.\d+$/);
    expect(await etcd.call('Auth', 'Authenticate', { name: 'grace', password: 'wrong' })).toMatchObject({ ok: false, code: 3 });
    // The stored hash was made by the worker at its cost (4), not by the gateway's default (10).
    const hash = node.applier.authView.passwordCheckInput('grace').passwordHash;
    expect(Buffer.from(hash).toString()).toMatch(/^\$2b\$04\$/);
  }, 60_000);

  it('no plaintext password in Redis', async () => {
    const entries = await dumpKeys(redis, `${prefix}:*`);
    expect(entries.length).toBeGreaterThan(0);
    const everything = entries.flatMap((entry) => [entry.key, ...entry.values]).join('\n');
    for (const password of Object.values(PASSWORDS)) expect(everything.includes(password)).toBe(false);
  });

  it('an unreachable Redis at boot with GATEWAY_PASSWORD_FALLBACK=in-process: bcrypt in process, with a warning', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) });
    const fallback = await createGateway(
      gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], redisUrl: 'redis://127.0.0.1:1', passwordPayloadKeys: keyRing, passwordFallback: 'in-process', redisConnectTimeoutMs: 500, bcryptCost: 4, logLevel: 'warn' }),
      { logger: createLogger({ name: 'test', level: 'warn', destination }) },
    );
    expect(fallback.passwordTier).toBe('in-process');
    expect(lines.join('')).toContain('redis unreachable; verifying passwords in process');
    const client = etcdTestClient(fallback.grpcAddress);
    expect((await client.call('Auth', 'Authenticate', { name: 'grace', password: PASSWORDS.grace })).ok).toBe(true);
    client.close();
    await fallback.stop();
  }, 30_000);
});
