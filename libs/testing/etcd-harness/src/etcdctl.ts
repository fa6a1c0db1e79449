import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { waitUntil } from './wait-until';

/** Default wall-clock limit for one etcdctl invocation. */
const ETCDCTL_TIMEOUT_MS = 30_000;
/** Output kept per stream; etcdctl answers in our scenarios are small. */
const MAX_CAPTURE_BYTES = 4 * 1024 * 1024;

/** Credentials as etcdctl's `--user name:password`. */
export interface Credentials {
  readonly name: string;
  readonly password: string;
}

export interface EtcdctlOptions {
  /** `host:port` endpoints for `--endpoints`. */
  readonly endpoints: readonly string[];
  readonly args: readonly string[];
  readonly user?: Credentials;
  /** Text written to etcdctl's stdin (txn -i, user passwd --interactive=false). */
  readonly stdin?: string;
  readonly timeoutMs?: number;
  /** The binary (default `etcdctl` on PATH; Debian's is 3.4.23). */
  readonly etcdctlBinary?: string;
}

/** What one etcdctl invocation did. `exitCode` is null when it was killed (timeout). */
export interface EtcdctlResult {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function etcdctlArgv(options: Pick<EtcdctlOptions, 'endpoints' | 'args' | 'user'>): string[] {
  const argv = [`--endpoints=${options.endpoints.join(',')}`, '--dial-timeout=5s', '--command-timeout=15s'];
  if (options.user) argv.push(`--user=${options.user.name}:${options.user.password}`);
  return [...argv, ...options.args];
}

function etcdctlEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ETCDCTL_API: '3' };
  // Never let a developer's own ETCDCTL_* settings leak into a scripted session.
  for (const name of Object.keys(env)) {
    if (name.startsWith('ETCDCTL_') && name !== 'ETCDCTL_API') delete env[name];
  }
  return env;
}

/** Collects a child's stdout and stderr (each up to MAX_CAPTURE_BYTES) into the returned object. */
function captureOutput(child: { readonly stdout: Readable; readonly stderr: Readable }): { stdout: string; stderr: string } {
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    if (output.stdout.length < MAX_CAPTURE_BYTES) output.stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (output.stderr.length < MAX_CAPTURE_BYTES) output.stderr += chunk.toString('utf8');
  });
  return output;
}

/** Runs `etcdctl` (API v3) once and captures its exit code, stdout and stderr. */
export function runEtcdctl(options: EtcdctlOptions): Promise<EtcdctlResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(options.etcdctlBinary ?? 'etcdctl', etcdctlArgv(options), {
      env: etcdctlEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const output = captureOutput(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? ETCDCTL_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ exitCode: code, ...output });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/** A running `etcdctl watch ...`: read its output while it runs, stop it when done. */
export interface EtcdctlWatch {
  /** stdout so far. */
  stdout(): string;
  /** Resolves once stdout satisfies `predicate` (or rejects after `timeoutMs`). */
  waitForStdout(predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves with the result once etcdctl has exited by itself (e.g. a canceled watch). */
  exited(): Promise<EtcdctlResult>;
  /** SIGINTs etcdctl (like Ctrl-C) and returns everything it printed. */
  stop(): Promise<EtcdctlResult>;
}

/** Starts a long-running etcdctl command (watch) in the background. */
export function startEtcdctl(options: Omit<EtcdctlOptions, 'stdin' | 'timeoutMs'>): EtcdctlWatch {
  const child = spawn(options.etcdctlBinary ?? 'etcdctl', etcdctlArgv(options), {
    env: etcdctlEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  const done = new Promise<EtcdctlResult>((resolvePromise) => {
    child.once('close', (code) => resolvePromise({ exitCode: code, ...output }));
    child.once('error', (error) => resolvePromise({ exitCode: null, stdout: output.stdout, stderr: `${output.stderr}spawn error: ${error.message}` }));
  });
  return {
    stdout: () => output.stdout,
    waitForStdout: (predicate, timeoutMs = 15_000) =>
      waitUntil('etcdctl output', () => predicate(output.stdout), timeoutMs, 50),
    exited: () => done,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        const result = await done;
        clearTimeout(timer);
        return result;
      }
      return done;
    },
  };
}
