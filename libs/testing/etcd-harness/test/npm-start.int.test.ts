// `npm start` as a user runs it: the embedded default comes up, etcdctl works against it (the
// README's first-time auth setup included), Ctrl-C stops every process and exits 0, and the data
// survives a restart; then the README's "Replacing a member" commands: a 4th member added as a
// learner, started by hand, promoted, member 3 removed (it exits, npm start keeps serving), and
// npm start run again with WARD_EXTRA_MEMBERS. Free ports and a temp data dir stand in for the
// defaults (2379, .ward).
import { WORKSPACE_ROOT, freePorts } from '@ward/testing/cluster';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, runEtcdctl, waitUntil } from '../src/index';

interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<string>;
}

/** `npm start`, or the launcher itself (`node tools/start.mjs`), which is what npm runs. */
function launch(how: 'npm' | 'node', env: Record<string, string>): Started {
  const [command, args] = how === 'npm' ? ['npm', ['start']] : [process.execPath, ['tools/start.mjs']];
  // detached: its own process group, like a shell's foreground job, so Ctrl-C can be sent to it.
  const child = spawn(command as string, args as string[], { cwd: WORKSPACE_ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<string>((done) => child.once('exit', (code, signal) => done(signal ?? `exit ${code}`)));
  return { child, output: () => output, exited };
}

function childPids(output: string): number[] {
  return [...output.matchAll(/started \S+ \(pid (\d+)\)/g)].map((match) => Number(match[1]));
}

describe.sequential('npm start', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let endpoint: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ward-start-'));
    const ports = await freePorts(14);
    env = {
      WARD_DATA_DIR: dataDir,
      WARD_CLIENT_PORT: String(ports[0]),
      WARD_HTTP_PORT: String(ports[1]),
      WARD_NODE_API_PORTS: ports.slice(2, 5).join(','),
      WARD_NODE_PEER_PORTS: ports.slice(5, 8).join(','),
      WARD_NODE_HTTP_PORTS: ports.slice(8, 11).join(','),
      WARD_BCRYPT_COST: '4',
    };
    endpoint = `127.0.0.1:${ports[0]}`;
    extraPorts = ports.slice(11, 14) as [number, number, number];
  });
  let extraPorts: [number, number, number];
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function upAndReady(how: 'npm' | 'node', extraEnv: Record<string, string> = {}): Promise<Started> {
    const started = launch(how, { ...env, ...extraEnv });
    // (the ready lines may arrive in more than one chunk: wait for the last one checked)
    await waitUntil('npm start to print its ready lines', () => started.output().includes('put foo bar') || started.child.exitCode !== null, 90_000, 100);
    if (!started.output().includes(`etcdctl --endpoints ${endpoint} put foo bar`)) {
      if (started.child.exitCode === null) process.kill(-started.child.pid!, 'SIGINT'); // leave nothing running
      expect.fail(`npm start is not ready:\n${started.output()}`);
    }
    return started;
  }

  /** Ctrl-C: SIGINT to the whole foreground process group. Returns how what was started ended. */
  async function ctrlC(started: Started, children = 4): Promise<string> {
    const pids = childPids(started.output());
    expect(pids).toHaveLength(children);
    process.kill(-started.child.pid!, 'SIGINT');
    const code = await started.exited;
    await waitUntil('the launcher to report it stopped', () => started.output().includes('ward: stopped'), 30_000, 100);
    await waitUntil('every child to be gone', () => pids.every((pid) => !isRunning(pid)), 10_000, 100);
    return code;
  }

  it('comes up, serves etcdctl through the README first-time auth setup, and Ctrl-C stops everything', async () => {
    const started = await upAndReady('npm');
    try {
      const ctl = (args: string[], user?: { name: string; password: string }) => runEtcdctl({ endpoints: [endpoint], args, user });
      expect((await ctl(['put', 'foo', 'bar'])).stdout).toBe('OK\n');
      expect((await ctl(['user', 'add', 'root', '--new-user-password=s3cret'])).stdout).toBe('User root created\n');
      expect((await ctl(['auth', 'enable'])).stdout).toBe('Authentication Enabled\n');
      expect((await ctl(['put', 'foo', 'bar'])).stderr).toContain('Error: etcdserver: user name is empty');
      expect((await ctl(['put', 'foo', 'baz'], { name: 'root', password: 's3cret' })).stdout).toBe('OK\n');
    } finally {
      // npm itself dies of the SIGINT (a shell shows 130), as for any npm script; the launcher
      // it ran still stops every child, which ctrlC checks.
      expect(['SIGINT', 'exit 130', 'exit 0']).toContain(await ctrlC(started));
    }
  });

  it('keeps the data across a restart; the launcher exits 0 on Ctrl-C', async () => {
    const started = await upAndReady('node');
    try {
      const get = await runEtcdctl({ endpoints: [endpoint], args: ['get', 'foo', '--print-value-only'], user: { name: 'root', password: 's3cret' } });
      expect(get.stdout).toBe('baz\n');
    } finally {
      expect(await ctrlC(started)).toBe('exit 0');
    }
  });

  it("replaces member 3 with the README's commands, and runs the new member on the next start with WARD_EXTRA_MEMBERS", async () => {
    const root = { name: 'root', password: 's3cret' };
    const ctl = (args: string[]) => runEtcdctl({ endpoints: [endpoint], args, user: root });
    const [peerPort, apiPort, httpPort] = extraPorts;
    const started = await upAndReady('node');
    let handStarted: ChildProcess | undefined;
    let hex: string | undefined;
    try {
      // 1. add the new member as a learner
      // (refused as `unhealthy cluster` until the members have been connected for etcd's 5 s)
      await waitUntil(
        'node-4 added',
        async () => {
          const added = await ctl(['member', 'add', 'node-4', `--peer-urls=http://127.0.0.1:${peerPort}`, '--learner']);
          hex = /Member\s+([0-9a-f]+) added to cluster/.exec(added.stdout)?.[1];
          if (hex === undefined && !added.stderr.includes('unhealthy cluster')) throw new Error(added.stdout + added.stderr);
          return hex !== undefined;
        },
        30_000,
        500,
      );
      // 2. start it as the README shows (RAFT_NODE_* from the README, the ports of this run)
      const id = `0x${hex!}`;
      const [api, peer] = [env.WARD_NODE_API_PORTS!.split(','), env.WARD_NODE_PEER_PORTS!.split(',')];
      const members = [1, 2, 3].map((i) => `${i}=node-${i}=127.0.0.1:${peer[i - 1]}=127.0.0.1:${api[i - 1]}`);
      const log = createWriteStream(join(dataDir, 'logs', 'raft-node-4.log'), { flags: 'a' });
      handStarted = spawn(process.execPath, [join(WORKSPACE_ROOT, 'dist', 'apps', 'raft-node', 'main.js')], {
        cwd: WORKSPACE_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          RAFT_NODE_MEMBER_ID: id,
          RAFT_NODE_INITIAL_CLUSTER_STATE: 'existing',
          RAFT_NODE_MEMBERS: [...members, `${id}=node-4=127.0.0.1:${peerPort}=127.0.0.1:${apiPort}`].join(','),
          RAFT_NODE_DATA_DIR: join(dataDir, 'data', 'node-4'),
          RAFT_NODE_HTTP_ADDRESS: `127.0.0.1:${httpPort}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      handStarted.stdout!.pipe(log);
      handStarted.stderr!.pipe(log);
      // 3. once it caught up and published itself, promote it (refused until it is in sync)
      await waitUntil('node-4 listed as started', async () => (await ctl(['member', 'list'])).stdout.includes(`${hex}, started, node-4,`), 60_000, 500);
      await waitUntil('node-4 promoted', async () => (await ctl(['member', 'promote', hex!])).stdout.includes('promoted'), 60_000, 500);
      // 4. remove member 3: it exits by itself; npm start says so and keeps serving
      await waitUntil('member 3 removed', async () => (await ctl(['member', 'remove', '3'])).stdout.includes('removed from cluster'), 60_000, 500);
      await waitUntil('npm start to report node 3 removed', () => started.output().includes('ward: raft-node-3 stopped: it was removed from the cluster'), 60_000, 200);
      expect(started.output()).not.toContain('exited unexpectedly');
      expect((await ctl(['move-leader', hex!])).stdout).toContain(`Leadership transferred from`);
      expect((await ctl(['put', 'replaced', 'yes'])).stdout).toBe('OK\n');
      const list = (await ctl(['member', 'list'])).stdout;
      expect(list.split('\n').filter((line) => line !== '').map((line) => line.split(', ')[2])).toEqual(['node-1', 'node-2', 'node-4']);
    } finally {
      handStarted?.kill('SIGTERM');
      await new Promise((done) => (handStarted === undefined || handStarted.exitCode !== null ? done(undefined) : handStarted.once('exit', done)));
      expect(await ctrlC(started)).toBe('exit 0');
    }
    // the next start runs the new member too, and the gateway knows its address
    const again = await upAndReady('node', { WARD_EXTRA_MEMBERS: `0x${hex}=node-4=${peerPort}=${apiPort}=${httpPort}` });
    try {
      expect(again.output()).toContain('started raft-node-4');
      const get = await runEtcdctl({ endpoints: [endpoint], args: ['get', 'replaced', '--print-value-only'], user: root });
      expect(get.stdout).toBe('yes\n');
      await waitUntil('node-4 leads or follows with the others', async () => (await ctl(['put', 'after-restart', '1'])).stdout === 'OK\n', 30_000, 500);
    } finally {
      expect(await ctrlC(again, 5)).toBe('exit 0');
    }
  });
});
