// The harness itself, against real etcd 3.4.23: clusters start and stop cleanly, etcdctl and the
// gRPC client reach them, reset really resets, and a scenario that expects the wrong thing fails.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EtcdGrpcClient,
  ROOT_PASSWORD,
  TEST_PASSWORDS,
  TEST_ROLE,
  TEST_USER,
  resetTarget,
  runEtcdctl,
  runScenario,
  setupAuth,
  startEtcdCluster,
  type EtcdCluster,
} from '../src/index';

describe('single-member etcd', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcdCluster({ members: 1, bcryptCost: 4 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs etcdctl against it', async () => {
    const put = await runEtcdctl({ endpoints: [cluster.clientEndpoint], args: ['put', 'k', 'v'] });
    expect(put).toMatchObject({ exitCode: 0, stdout: 'OK\n' });
    const get = await runEtcdctl({ endpoints: [cluster.clientEndpoint], args: ['get', 'k', '--print-value-only'] });
    expect(get.stdout).toBe('v\n');
  });

  it('resets auth, users, roles and keys through the API', async () => {
    const client = new EtcdGrpcClient(cluster.clientEndpoint);
    try {
      await resetTarget(client);
      const rootToken = await setupAuth(client, { roles: [TEST_ROLE], users: [TEST_USER] });
      expect(rootToken).toMatch(/^[a-zA-Z]{16}\.\d+$/);
      await resetTarget(client);
      const users = await client.call<{ users: string[] }>('Auth', 'UserList', {});
      const roles = await client.call<{ roles: string[] }>('Auth', 'RoleList', {});
      expect(users).toMatchObject({ ok: true, response: { users: [] } });
      expect(roles).toMatchObject({ ok: true, response: { roles: [] } });
      const range = await client.call<{ count: string }>('KV', 'Range', { key: Buffer.from([0]), range_end: Buffer.from([0]) });
      expect(range).toMatchObject({ ok: true, response: { count: '0' } });
      const authenticate = await client.call('Auth', 'Authenticate', { name: 'root', password: ROOT_PASSWORD });
      expect(authenticate).toEqual({ ok: false, code: 9, details: 'etcdserver: authentication is not enabled' });
    } finally {
      client.close();
    }
  });

  it('reports a scenario step that does not behave as scripted', async () => {
    const run = await runScenario(cluster, {
      name: 'deliberately wrong',
      spec: 'harness self-test',
      setup: { roles: [TEST_ROLE], users: [TEST_USER] },
      passwords: TEST_PASSWORDS,
      steps: [
        { ctl: ['put', 'bar', 'x'], as: 'test-user', expect: { out: 'OK' } },
        { ctl: ['put', 'foo', 'x'], as: 'test-user', expect: { error: 'etcdserver: permission denied' } },
        { ctl: ['put', 'foo', 'y'], as: 'test-user', expect: { out: 'OK' } },
      ],
    });
    const failedSteps = new Set(run.failures.map((failure) => failure.split(' ')[1]));
    expect([...failedSteps]).toEqual(['0', '1']);
    expect(run.failures.some((failure) => failure.includes('succeeded, expected error etcdserver: permission denied'))).toBe(true);
    expect(run.records[0]).toMatchObject({ exitCode: 1, stderr: expect.stringContaining('Error: etcdserver: permission denied') });
  });
});

describe('3-member etcd', () => {
  it('starts three healthy members that replicate, and stop removes everything', async () => {
    const cluster = await startEtcdCluster({ members: 3, bcryptCost: 4 });
    try {
      expect(cluster.members).toHaveLength(3);
      expect(cluster.allAlive()).toBe(true);
      const [first, , third] = cluster.clientEndpoints;
      await runEtcdctl({ endpoints: [first as string], args: ['put', 'replicated', 'yes'] });
      const get = await runEtcdctl({ endpoints: [third as string], args: ['get', 'replicated', '--print-value-only'] });
      expect(get.stdout).toBe('yes\n');
      const members = await runEtcdctl({ endpoints: [first as string], args: ['member', 'list'] });
      expect(members.stdout.trim().split('\n')).toHaveLength(3);
    } finally {
      await cluster.stop();
    }
    expect(cluster.allAlive()).toBe(false);
    expect(existsSync(cluster.dataDir)).toBe(false);
  });
});
