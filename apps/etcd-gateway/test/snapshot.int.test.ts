// The operator's backup procedure against ward: `etcdctl snapshot save` (the real etcdctl 3.4)
// through the gateway, `raft-node snapshot-restore` (the real bundle) into the data dirs of a NEW
// three-member cluster, which then serves the keys with their revisions, the users, roles and
// permissions, and the auth enabled flag. Snapshot is admin-only: a non-root user and an
// anonymous caller get etcd's errors and no file.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, buildRaftNodeBundle } from '@ward/testing/cluster';
import { runEtcdctl, type EtcdctlResult } from '@ward/testing/etcd-harness';
import { createGateway, gatewayConfig, type Gateway } from '../src/index';
import { etcdTestClient } from '../src/testing/etcd-client';
import { bytes, login, must, setUpAuth, startWardCluster, type WardCluster } from './support/ward-cluster';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 60_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

const etcdctl = (endpoint: string, user: string | undefined, ...args: string[]): Promise<EtcdctlResult> =>
  runEtcdctl({ endpoints: [endpoint], args: [...(user === undefined ? [] : [`--user=${user}`]), ...args], timeoutMs: 60_000 });

let source: WardCluster;
let work: string;
let lastRevision = 0;
let sourceToken = '';
let restored: LocalCluster | undefined;
let gateway: Gateway | undefined;
const entry = buildRaftNodeBundle();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ward-snapshot-'));
  source = await startWardCluster();
  await setUpAuth(source.client(), { rootPassword: 'root-pw', user: 'alice', password: 'alice-pw', prefix: 'a/' });
  const etcd = source.client();
  const token = await login(etcd, 'root', 'root-pw');
  sourceToken = token;
  await must(etcd.call('KV', 'Put', { key: bytes('a/one'), value: bytes('1') }, token));
  await must(etcd.call('KV', 'Put', { key: bytes('a/two'), value: bytes('first') }, token));
  await must(etcd.call('KV', 'Put', { key: bytes('a/two'), value: bytes('second') }, token));
  // A value big enough for the file to span several 32 KiB chunks.
  const last = await must<{ header: { revision: string } }>(etcd.call('KV', 'Put', { key: bytes('b/big'), value: Buffer.alloc(100_000, 7) }, token));
  lastRevision = Number(last.header.revision);
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await restored?.stop();
  await source?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('etcdctl snapshot save and raft-node snapshot-restore', () => {
  it('refuses a non-root user and an anonymous caller with etcd errors, writing no file', async () => {
    const endpoint = source.gateways[0]!.grpcAddress;
    const denied = await etcdctl(endpoint, 'alice:alice-pw', 'snapshot', 'save', join(work, 'alice.db'));
    expect(denied.exitCode).not.toBe(0);
    expect(denied.stderr).toContain('Error: etcdserver: permission denied');
    const anonymous = await etcdctl(endpoint, undefined, 'snapshot', 'save', join(work, 'anonymous.db'));
    expect(anonymous.exitCode).not.toBe(0);
    expect(anonymous.stderr).toContain('Error: etcdserver: user name is empty');
    expect((await readdir(work)).filter((name) => name.endsWith('.db') || name.endsWith('.part'))).toEqual([]);
  }, 60_000);

  it('saves a snapshot as root, restores it into a new cluster, and the new cluster serves the data and the users', async () => {
    const file = join(work, 'backup.db');
    const saved = await etcdctl(source.gateways[0]!.grpcAddress, 'root:root-pw', 'snapshot', 'save', file);
    expect(saved.stderr).not.toContain('Error');
    expect(saved.exitCode).toBe(0);
    expect(saved.stdout).toContain(`Snapshot saved at ${file}`);
    const size = (await stat(file)).size;
    expect(size % 512).toBe(32);
    expect(size).toBeGreaterThan(100_000);
    expect((await readFile(file)).subarray(0, 8).toString('latin1')).toBe('WARDBKUP');

    // Damaged copies are refused and leave no data dir behind.
    const good = await readFile(file);
    const truncated = join(work, 'truncated.db');
    await writeFile(truncated, good.subarray(0, good.length - 512));
    const flipped = join(work, 'flipped.db');
    const damaged = Buffer.from(good);
    damaged[1000]! ^= 0xff;
    await writeFile(flipped, damaged);
    for (const [bad, message] of [
      [truncated, 'checksum mismatch'],
      [flipped, 'checksum mismatch'],
    ] as const) {
      const refused = await run(process.execPath, [entry, 'snapshot-restore', '--file', bad, '--data-dir', join(work, 'refused'), '--member-id', '1', '--members', '1=n1=127.0.0.1:1=127.0.0.1:2']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(message);
    }
    expect((await readdir(work)).some((name) => name.includes('refused'))).toBe(false);

    restored = await LocalCluster.start({
      entry,
      size: 3,
      memberIds: [11n, 12n, 13n],
      env: { RAFT_NODE_LOG_LEVEL: 'info' },
      prepare: async (members) => {
        for (const member of members) {
          const result = await run(process.execPath, [entry, 'snapshot-restore', '--file', file, '--data-dir', member.dataDir, '--member-id', member.id.toString(), '--members', member.membersEnv]);
          expect(result.stderr).toBe('');
          expect(result.code).toBe(0);
          expect(result.stdout).toMatch(/^restored /);
        }
      },
    });
    await restored.waitForLeader(20_000);
    gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: restored.members.map((m) => m.apiAddress), bcryptCost: 4, logLevel: 'warn' }));
    const endpoint = gateway.grpcAddress;

    // Keys with their revisions, read as the old non-root user (its password and permissions came along).
    const got = await etcdctl(endpoint, 'alice:alice-pw', 'get', 'a/two', '-w', 'json');
    expect(got.exitCode).toBe(0);
    const answer = JSON.parse(got.stdout) as { header: { revision: number; cluster_id: number }; kvs: Array<{ key: string; value: string; create_revision: number; mod_revision: number; version: number }> };
    expect(Buffer.from(answer.kvs[0]!.value, 'base64').toString()).toBe('second');
    expect(answer.kvs[0]!.version).toBe(2);
    expect(answer.header.revision).toBe(lastRevision);
    expect((await etcdctl(endpoint, 'root:root-pw', 'get', 'a/one', '--print-value-only')).stdout.trim()).toBe('1');
    expect((await etcdctl(endpoint, 'root:root-pw', 'get', 'b/big', '--print-value-only')).stdout.trim()).toBe(Buffer.alloc(100_000, 7).toString());
    // Auth is still enabled, permissions still apply.
    expect((await etcdctl(endpoint, undefined, 'get', 'a/one')).stderr).toContain('etcdserver: user name is empty');
    expect((await etcdctl(endpoint, 'alice:alice-pw', 'get', 'b/big')).stderr).toContain('etcdserver: permission denied');
    // Writes go on from the restored revision.
    const put = await etcdctl(endpoint, 'alice:alice-pw', 'put', 'a/three', '3', '-w', 'json');
    expect(put.exitCode).toBe(0);
    expect((JSON.parse(put.stdout) as { header: { revision: number } }).header.revision).toBe(lastRevision + 1);
    const roles = await etcdctl(endpoint, 'root:root-pw', 'user', 'get', 'alice');
    expect(roles.stdout).toContain('rw-a/');
    // A simple token of the old cluster does not work on the new one (restore drops them).
    const client = etcdTestClient(endpoint);
    try {
      expect(await client.call('KV', 'Range', { key: bytes('a/one') }, sourceToken)).toMatchObject({ ok: false, code: 16, details: 'etcdserver: invalid auth token' });
      expect(await source.client().call('KV', 'Range', { key: bytes('a/one') }, sourceToken)).toMatchObject({ ok: true });
    } finally {
      client.close();
    }
  }, 180_000);
});
