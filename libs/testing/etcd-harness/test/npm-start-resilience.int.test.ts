// `npm start` keeps serving when one of its processes dies, and leaves nothing behind when it dies
// itself: the launcher (node tools/start.mjs, what npm runs) with the BullMQ tier on a
// redis-server of this test's own (a free port; the machine's Redis is not touched). Under a loop
// of Puts through the gateway: kill -9 of a follower (no Put fails), of the leader (Puts resume),
// of the password-verifier; each is restarted by the launcher and the member rejoins (its /readyz,
// its applied index, `etcdctl member list`). Then SIGKILL of the launcher: every child exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_ROOT, freePorts } from '@ward/testing/cluster';
import { EtcdGrpcClient, isRunning, runEtcdctl, waitUntil } from '../src/index';

let dataDir: string;
let redis: ChildProcess | undefined;
let launcher: ChildProcess | undefined;
let output = '';
let endpoint: string;
let nodeHttpPorts: number[];
let client: EtcdGrpcClient;

/** The pid of each child, from the launcher's `started`/`restarted <name> (pid N)` lines (the latest wins). */
function pids(): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of output.matchAll(/(?:re)?started (\S+) \(pid (\d+)\)/g)) found.set(match[1]!, Number(match[2]));
  return found;
}

async function memberHttp(index: number, path: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${nodeHttpPorts[index]}${path}`, { signal: AbortSignal.timeout(2000) });
}

async function appliedIndex(index: number): Promise<number> {
  const text = await (await memberHttp(index, '/metrics')).text();
  const match = /^ward_raft_node_applied_index\{[^}]*\} (\d+)/m.exec(text);
  if (match === null) throw new Error(`no applied index in member ${index + 1}'s metrics`);
  return Number(match[1]);
}

/** Puts in a loop, one at a time, until stopped; counts successes and keeps every failure. */
function putLoop(prefix: string): { stop: () => Promise<{ ok: number; failures: string[] }> } {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const done = (async () => {
    for (let i = 0; running; i++) {
      const result = await client.call('KV', 'Put', { key: Buffer.from(`${prefix}${i % 50}`), value: Buffer.from(String(i)) }, { deadlineMs: 5000 });
      if (result.ok) ok += 1;
      else failures.push(`${result.code} ${result.details}`);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { ok, failures };
    },
  };
}

/** kill -9 of `name`; resolves with its new pid once the launcher restarted it. */
async function killAndAwaitRestart(name: string): Promise<number> {
  const old = pids().get(name)!;
  process.kill(old, 'SIGKILL');
  await waitUntil(`${name} restarted`, () => (pids().get(name) ?? old) !== old, 20_000, 50);
  expect(output).toMatch(new RegExp(`ward: ${name} exited unexpectedly \\(SIGKILL\\) after [0-9.]+ s; restarting it in 200 ms`));
  return pids().get(name)!;
}

/** The member (0-based) leading now, per the gateway's Status. */
async function leaderIndex(): Promise<number> {
  const status = await client.call<{ leader: string }>('Maintenance', 'Status', {});
  if (!status.ok) throw new Error(status.details);
  return Number(status.response.leader) - 1;
}

/** The member rejoined: ready, caught up with a write made after its restart, listed as started. */
async function expectRejoined(index: number): Promise<void> {
  const put = await client.call('KV', 'Put', { key: Buffer.from('after-restart'), value: Buffer.from(String(index)) });
  expect(put.ok).toBe(true);
  const target = Math.max(...(await Promise.all([0, 1, 2].filter((i) => i !== index).map((i) => appliedIndex(i)))));
  await waitUntil(`member ${index + 1} ready`, async () => (await memberHttp(index, '/readyz')).ok, 30_000, 200);
  await waitUntil(`member ${index + 1} caught up`, async () => (await appliedIndex(index)) >= target, 30_000, 200);
  const list = await runEtcdctl({ endpoints: [endpoint], args: ['member', 'list'] });
  expect(list.stdout).toContain(`${index + 1}, started, node-${index + 1},`);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ward-resilience-'));
  const ports = await freePorts(12);
  nodeHttpPorts = ports.slice(8, 11);
  endpoint = `127.0.0.1:${ports[0]}`;
  const redisPort = ports[11]!;
  redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  launcher = spawn(process.execPath, ['tools/start.mjs'], {
    cwd: WORKSPACE_ROOT,
    env: {
      ...process.env,
      WARD_DATA_DIR: dataDir,
      WARD_CLIENT_PORT: String(ports[0]),
      WARD_HTTP_PORT: String(ports[1]),
      WARD_NODE_API_PORTS: ports.slice(2, 5).join(','),
      WARD_NODE_PEER_PORTS: ports.slice(5, 8).join(','),
      WARD_NODE_HTTP_PORTS: nodeHttpPorts.join(','),
      WARD_BCRYPT_COST: '4',
      WARD_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launcher.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitUntil('npm start ready', () => output.includes('put foo bar') || launcher!.exitCode !== null, 90_000, 100);
  if (!output.includes('ward: ready')) throw new Error(`npm start is not ready:\n${output}`);
  client = new EtcdGrpcClient(endpoint);
}, 120_000);

afterAll(async () => {
  client?.close();
  // Whatever is left (only if a test failed half-way): the launcher, then every child it started.
  if (launcher !== undefined && launcher.exitCode === null && launcher.signalCode === null) launcher.kill('SIGKILL');
  for (const pid of pids().values()) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  redis?.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe.sequential('npm start under failures', () => {
  it('kill -9 of a follower under Puts: restarted, rejoins, and no Put fails', async () => {
    await waitUntil('a leader', async () => (await client.call('Maintenance', 'Status', {})).ok, 30_000, 200);
    const follower = ((await leaderIndex()) + 1) % 3;
    const loop = putLoop('f/');
    await new Promise((done) => setTimeout(done, 1000));
    await killAndAwaitRestart(`raft-node-${follower + 1}`);
    await expectRejoined(follower);
    await new Promise((done) => setTimeout(done, 1000));
    const { ok, failures } = await loop.stop();
    console.log('follower kill -9:', JSON.stringify({ ok, failed: failures.length }));
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(20);
  });

  it('kill -9 of the leader under Puts: restarted, a new leader serves, the old one rejoins', async () => {
    const leader = await leaderIndex();
    const loop = putLoop('l/');
    await new Promise((done) => setTimeout(done, 1000));
    const killedAt = performance.now();
    await killAndAwaitRestart(`raft-node-${leader + 1}`);
    await waitUntil('a Put through the gateway', async () => (await client.call('KV', 'Put', { key: Buffer.from('probe'), value: Buffer.from('1') }, { deadlineMs: 2000 })).ok, 10_000, 50);
    const servingAfterMs = performance.now() - killedAt;
    await expectRejoined(leader);
    const { ok, failures } = await loop.stop();
    console.log('leader kill -9:', JSON.stringify({ ok, failed: failures.length, failures: failures.slice(0, 5), servingAfterMs: Math.round(servingAfterMs) }));
    expect(servingAfterMs).toBeLessThan(10_000);
    expect(ok).toBeGreaterThan(20);
    // Only etcd's transient answers while the members elect a new leader.
    for (const failure of failures) expect(failure).toMatch(/^14 /);
  });

  it('kill -9 of the password-verifier: restarted, and UserAdd is hashed by the new one', async () => {
    await killAndAwaitRestart('password-verifier-1');
    await waitUntil('UserAdd through the restarted verifier', async () => (await client.call('Auth', 'UserAdd', { name: 'after-verifier', password: 'x-8d1c' }, { deadlineMs: 12_000 })).ok, 30_000, 500);
    const cluster = pids();
    for (const [name, pid] of cluster) expect(isRunning(pid), name).toBe(true);
    expect(output).not.toContain('ward: stopping');
  });

  it('SIGKILL of the launcher: every child exits within a few seconds', async () => {
    const children = [...pids().values()];
    expect(children).toHaveLength(5); // 3 raft-nodes, the verifier, the gateway
    const exited = new Promise((done) => launcher!.once('exit', done));
    process.kill(launcher!.pid!, 'SIGKILL');
    await exited;
    const killedAt = performance.now();
    await waitUntil('every child of the killed launcher to exit', () => children.every((pid) => !isRunning(pid)), 10_000, 50);
    console.log('children gone after the launcher SIGKILL in', Math.round(performance.now() - killedAt), 'ms');
  });
});
