// Security: a password change races Authenticate, made deterministic with the gateway's hooks.
// The old password never yields a token — whether the change lands between the password check
// and the simple token's assignment (whose apply refuses it), or between the assignment and the
// final check. Afterwards no
// plaintext password is in any raft-node's WAL, snapshot or log, nor in the gateways' logs.
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthenticateHooks } from '../src/index';
import { login, must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

const ROOT_PASSWORD = 'Root-pw-0a9f3c1e77';
const OLD_PASSWORD = 'Old-pw-5be0d2a4c1';
const NEW_PASSWORD = 'New-pw-e81f6b3d92';
const LATER_PASSWORD = 'Later-pw-3c7a90e1f4';

let ward: WardCluster;
/** The hook the racing gateway runs; swapped per test. */
let hooks: AuthenticateHooks = {};

beforeAll(async () => {
  ward = await startWardCluster();
  await ward.addGateway({}, {
    authenticateHooks: {
      afterPasswordCheck: (name, revision) => hooks.afterPasswordCheck?.(name, revision) ?? Promise.resolve(),
      beforeTokenIssue: (name, revision) => hooks.beforeTokenIssue?.(name, revision) ?? Promise.resolve(),
      afterTokenIssued: (name, revision) => hooks.afterTokenIssued?.(name, revision) ?? Promise.resolve(),
    },
  });
  await setUpAuth(ward.client(), { rootPassword: ROOT_PASSWORD, user: 'carol', password: OLD_PASSWORD, prefix: 'c/' });
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

/** Changes carol's password through the other gateway, once. */
function changeOnce(to: string): () => Promise<void> {
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    const etcd = ward.client(ward.gateways[0]);
    const root = await login(etcd, 'root', ROOT_PASSWORD);
    await must(etcd.call('Auth', 'UserChangePassword', { name: 'carol', password: to }, root), 'UserChangePassword');
  };
}

describe('password change racing Authenticate', () => {
  it('change between the password check and the token assignment: the apply refuses it, the old password is refused', async () => {
    const change = changeOnce(NEW_PASSWORD);
    hooks = { afterPasswordCheck: change };
    const racing = ward.client(ward.gateways[1]);
    expect(await racing.call('Auth', 'Authenticate', { name: 'carol', password: OLD_PASSWORD })).toEqual({
      ok: false,
      code: 3,
      details: 'etcdserver: authentication failed, invalid user ID or password',
    });
    hooks = {};
    expect(await login(racing, 'carol', NEW_PASSWORD)).toMatch(/^[A-Za-z]{16}\.\d+$/);
  }, 60_000);

  it('change after the simple token was assigned: the token is withheld, the old password refused', async () => {
    const change = changeOnce(LATER_PASSWORD);
    hooks = { afterTokenIssued: change };
    const racing = ward.client(ward.gateways[1]);
    expect(await racing.call('Auth', 'Authenticate', { name: 'carol', password: NEW_PASSWORD })).toMatchObject({ ok: false, code: 3 });
    hooks = {};
    expect((await racing.call('Auth', 'Authenticate', { name: 'carol', password: NEW_PASSWORD })).ok).toBe(false);
    const token = await login(racing, 'carol', LATER_PASSWORD);
    expect((await racing.call('KV', 'Put', { key: Buffer.from('c/1'), value: Buffer.from('v') }, token)).ok).toBe(true);
  }, 60_000);

  it('change just before the token assignment: the apply refuses it, the old password is refused', async () => {
    const change = changeOnce(OLD_PASSWORD);
    hooks = { beforeTokenIssue: change };
    const racing = ward.client(ward.gateways[1]);
    expect(await racing.call('Auth', 'Authenticate', { name: 'carol', password: LATER_PASSWORD })).toEqual({
      ok: false,
      code: 3,
      details: 'etcdserver: authentication failed, invalid user ID or password',
    });
    hooks = {};
    const token = await login(racing, 'carol', OLD_PASSWORD);
    expect((await racing.call('KV', 'Put', { key: Buffer.from('c/2'), value: Buffer.from('v') }, token)).ok).toBe(true);
    await must(ward.client(ward.gateways[0]).call('Auth', 'UserChangePassword', { name: 'carol', password: LATER_PASSWORD }, await login(ward.client(ward.gateways[0]), 'root', ROOT_PASSWORD)), 'UserChangePassword');
  }, 60_000);

  it('a racing change that is not a password change (revision moved) costs a retry, not a failure', async () => {
    let bumped = false;
    hooks = {
      afterPasswordCheck: async () => {
        if (bumped) return;
        bumped = true;
        const etcd = ward.client(ward.gateways[0]);
        await must(etcd.call('Auth', 'RoleAdd', { name: `unrelated-${Date.now()}` }, await login(etcd, 'root', ROOT_PASSWORD)));
      },
    };
    const token = await login(ward.client(ward.gateways[1]), 'carol', LATER_PASSWORD);
    hooks = {};
    expect(bumped).toBe(true);
    expect(token).toMatch(/^[A-Za-z]{16}\.\d+$/);
  }, 60_000);
});

async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(root)) {
    const path = join(root, name);
    if ((await stat(path)).isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

describe('no plaintext password at rest or in logs', () => {
  it('scans every WAL, snapshot and log file of the run', async () => {
    // Also through the JSON gateway, so both front doors are covered.
    const http = await ward.gateways[0]!.injectHttp({ method: 'POST', url: '/v3/auth/authenticate', payload: JSON.stringify({ name: 'carol', password: LATER_PASSWORD }) });
    expect(http.statusCode).toBe(200);
    const passwords = [ROOT_PASSWORD, OLD_PASSWORD, NEW_PASSWORD, LATER_PASSWORD];
    const root = dirname(ward.cluster.members[0]!.dataDir);
    const files = await filesUnder(root);
    expect(files.some((file) => file.includes('wal') || file.endsWith('.wal'))).toBe(true);
    let scannedBytes = 0;
    let userNameSeen = false;
    for (const file of files) {
      const text = (await readFile(file)).toString('latin1');
      scannedBytes += text.length;
      if (text.includes('carol')) userNameSeen = true;
      for (const password of passwords) expect(text.includes(password), `${password} in ${file}`).toBe(false);
    }
    const gatewayLog = ward.logLines.join('');
    for (const password of passwords) expect(gatewayLog.includes(password)).toBe(false);
    // The scan can see what it looks for: user names are in the WAL next to their bcrypt hashes.
    expect(userNameSeen).toBe(true);
    expect(scannedBytes).toBeGreaterThan(10_000);
    expect(gatewayLog).toContain('revision when password checked became stale; retrying');
  }, 60_000);
});
