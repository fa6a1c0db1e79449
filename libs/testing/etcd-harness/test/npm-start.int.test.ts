// `npm start` as a user runs it: the embedded default comes up, etcdctl works against it (the
// README's first-time auth setup included), Ctrl-C stops every process and exits 0, and the data
// survives a restart. Free ports and a temp data dir stand in for the defaults (2379, .ward).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_ROOT, findFreePorts, runEtcdctl, waitUntil } from '../src/index';

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

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.sequential('npm start', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let endpoint: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ward-start-'));
    const ports = await findFreePorts(11);
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
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function upAndReady(how: 'npm' | 'node'): Promise<Started> {
    const started = launch(how, env);
    await waitUntil('npm start to print its ready line', () => started.output().includes('ward: ready') || started.child.exitCode !== null, 90_000, 100);
    expect(started.output(), started.output()).toContain(`etcdctl --endpoints ${endpoint} put foo bar`);
    return started;
  }

  /** Ctrl-C: SIGINT to the whole foreground process group. Returns how what was started ended. */
  async function ctrlC(started: Started): Promise<string> {
    const pids = childPids(started.output());
    expect(pids).toHaveLength(4);
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
});
