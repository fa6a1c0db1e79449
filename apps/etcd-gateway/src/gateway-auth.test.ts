// Auth through the gateway in front of a one-member applier node: user management, enabling
// auth, simple tokens, etcd 3.7's token rules, and no plaintext password anywhere.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfig } from './config';
import { createGateway, type Gateway } from './gateway';
import { startApplierNode, type ApplierNode } from './testing/applier-node';
import { etcdTestClient, type EtcdTestClient } from './testing/etcd-client';

const b = (text: string): Buffer => Buffer.from(text);
const ROOT_PASSWORD = 'root-Pa55word-never-logged';
const ALICE_PASSWORD = 'alice-first-Pa55word';
const ALICE_NEW_PASSWORD = 'alice-second-Pa55word';

let node: ApplierNode;
let gateway: Gateway;
let etcd: EtcdTestClient;
const logLines: string[] = [];

async function must<T = Record<string, unknown>>(service: Parameters<EtcdTestClient['call']>[0], method: string, request: object, token?: string): Promise<T> {
  const result = await etcd.call<T>(service, method, request, token);
  if (!result.ok) throw new Error(`${method}: ${result.code} ${result.details}`);
  return result.value;
}

async function login(name: string, password: string): Promise<string> {
  return (await must<{ token: string }>('Auth', 'Authenticate', { name, password })).token;
}

beforeAll(async () => {
  node = await startApplierNode();
  const destination = new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), done()) });
  gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: [node.address], bcryptCost: 4, logLevel: "debug" }), {
    logger: createLogger({ name: 'gateway', level: 'debug', destination }),
  });
  etcd = etcdTestClient(gateway.grpcAddress);
  await must('Auth', 'UserAdd', { name: 'root', password: ROOT_PASSWORD }).catch((e) => { console.log(logLines.join('')); throw e; });
  await must('Auth', 'UserGrantRole', { user: 'root', role: 'root' }).catch((e) => { console.log(logLines.join('')); throw e; });
  await must('Auth', 'RoleAdd', { name: 'rw-foo' });
  await must('Auth', 'RoleGrantPermission', { name: 'rw-foo', perm: { permType: 'Readwrite', key: b('foo'), range_end: b('fop') } });
  await must('Auth', 'UserAdd', { name: 'alice', password: ALICE_PASSWORD });
  await must('Auth', 'UserGrantRole', { user: 'alice', role: 'rw-foo' });
});

afterAll(async () => {
  etcd?.close();
  await gateway?.stop();
  await node?.stop();
});

describe('auth through the gateway (etcd 3.7 semantics)', () => {
  it('Authenticate while auth is disabled: FailedPrecondition `authentication is not enabled`', async () => {
    expect(await etcd.call('Auth', 'Authenticate', { name: 'root', password: ROOT_PASSWORD })).toEqual({ ok: false, code: 9, details: 'etcdserver: authentication is not enabled' });
  });

  it('a garbage token while auth is disabled is ignored', async () => {
    expect((await etcd.call('KV', 'Put', { key: b('foo/x'), value: b('1') }, 'garbage')).ok).toBe(true);
  });

  it('enables auth; AuthStatus answers without a token (3.7)', async () => {
    await must('Auth', 'AuthEnable', {});
    expect(await must('Auth', 'AuthStatus', {})).toMatchObject({ enabled: true });
  });

  it('issues simple tokens in etcd’s format and stamps the identity into proposals', async () => {
    const token = await login('alice', ALICE_PASSWORD);
    expect(token).toMatch(/^[A-Za-z]{16}\.\d+$/);
    await must('KV', 'Put', { key: b('foo/1'), value: b('v') }, token);
    const header = node.options.proposals.at(-1)!.header;
    expect(header.username).toBe('alice');
    expect(header.authRevision).toBe(node.applier.authView.revision);
  });

  it('enforces what the cluster decides: permission denied outside the grant, user name is empty without a token', async () => {
    const token = await login('alice', ALICE_PASSWORD);
    expect(await etcd.call('KV', 'Put', { key: b('bar'), value: b('v') }, token)).toEqual({ ok: false, code: 7, details: 'etcdserver: permission denied' });
    expect(await etcd.call('KV', 'Put', { key: b('foo'), value: b('v') })).toEqual({ ok: false, code: 3, details: 'etcdserver: user name is empty' });
    expect(await etcd.call('KV', 'Range', { key: b('foo') })).toEqual({ ok: false, code: 3, details: 'etcdserver: user name is empty' });
  });

  it('a garbage token while auth is enabled: Unauthenticated `invalid auth token`, also on AuthStatus', async () => {
    for (const token of ['garbage', 'abcdefghijklmnop.99999999', '', 'x'.repeat(9000)]) {
      expect([token.slice(0, 20), await etcd.call('KV', 'Range', { key: b('foo') }, token)]).toEqual([token.slice(0, 20), { ok: false, code: 16, details: 'etcdserver: invalid auth token' }]);
    }
    expect(await etcd.call('Auth', 'AuthStatus', {}, 'garbage')).toEqual({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
  });

  it('accepts the token under `authorization` with a Bearer prefix', async () => {
    const token = await login('alice', ALICE_PASSWORD);
    expect((await etcd.call('KV', 'Range', { key: b('foo/1') }, `Bearer ${token}`, 'authorization')).ok).toBe(true);
  });

  it('ignores a token attached to Authenticate (3.5+)', async () => {
    const result = await etcd.call<{ token: string }>('Auth', 'Authenticate', { name: 'alice', password: ALICE_PASSWORD }, 'garbage');
    expect(result.ok).toBe(true);
  });

  it('wrong password and unknown user are indistinguishable', async () => {
    const expected = { ok: false, code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' };
    expect(await etcd.call('Auth', 'Authenticate', { name: 'alice', password: 'wrong' })).toEqual(expected);
    expect(await etcd.call('Auth', 'Authenticate', { name: 'nobody', password: 'wrong' })).toEqual(expected);
  });

  it('a password over 72 bytes: Unknown `bcrypt: password length exceeds 72 bytes`, nothing proposed', async () => {
    const root = await login('root', ROOT_PASSWORD);
    const before = node.options.proposals.length;
    expect(await etcd.call('Auth', 'UserAdd', { name: 'long', password: 'p'.repeat(73) }, root)).toEqual({ ok: false, code: 2, details: 'bcrypt: password length exceeds 72 bytes' });
    expect(node.options.proposals.length).toBe(before);
  });

  it('non-root admin operations are refused by the cluster, not the gateway', async () => {
    const token = await login('alice', ALICE_PASSWORD);
    const before = node.options.proposals.length;
    expect(await etcd.call('Auth', 'UserList', {}, token)).toEqual({ ok: false, code: 7, details: 'etcdserver: permission denied' });
    expect(node.options.proposals.length).toBe(before + 1);
  });

  it('a password change invalidates the user’s simple tokens (after the ≤1 s cache) and the old password', async () => {
    const root = await login('root', ROOT_PASSWORD);
    const old = await login('alice', ALICE_PASSWORD);
    await must('Auth', 'UserChangePassword', { name: 'alice', password: ALICE_NEW_PASSWORD }, root);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await etcd.call('KV', 'Range', { key: b('foo') }, old)).toEqual({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
    expect((await etcd.call('Auth', 'Authenticate', { name: 'alice', password: ALICE_PASSWORD })).ok).toBe(false);
    expect((await etcd.call('Auth', 'Authenticate', { name: 'alice', password: ALICE_NEW_PASSWORD })).ok).toBe(true);
  });

  it('a cached identity whose revision went stale is resolved again instead of failing', async () => {
    const root = await login('root', ROOT_PASSWORD);
    const token = await login('alice', ALICE_NEW_PASSWORD);
    await must('KV', 'Put', { key: b('foo/c'), value: b('1') }, token); // resolution cached
    await must('Auth', 'RoleAdd', { name: 'unrelated' }, root); // bumps the auth revision
    expect((await etcd.call('KV', 'Put', { key: b('foo/c'), value: b('2') }, token)).ok).toBe(true);
  });

  it('disabling auth drops tokens; a stale token is then ignored', async () => {
    const root = await login('root', ROOT_PASSWORD);
    await must('Auth', 'AuthDisable', {}, root);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await etcd.call('KV', 'Put', { key: b('bar'), value: b('1') }, root)).ok).toBe(true);
    await must('Auth', 'AuthEnable', {});
  });

  it('no plaintext password reaches a Raft entry or a log line', () => {
    const passwords = [ROOT_PASSWORD, ALICE_PASSWORD, ALICE_NEW_PASSWORD];
    expect(node.options.entries.length).toBeGreaterThan(10);
    for (const entry of node.options.entries) {
      const text = Buffer.from(entry).toString('latin1');
      for (const password of passwords) expect(text.includes(password)).toBe(false);
    }
    const log = logLines.join('');
    expect(log.length).toBeGreaterThan(0);
    for (const password of passwords) expect(log.includes(password)).toBe(false);
    // The check can fail: the entries do carry the user names next to the hashes.
    expect(node.options.entries.some((entry) => Buffer.from(entry).toString('latin1').includes('alice'))).toBe(true);
  });
});
