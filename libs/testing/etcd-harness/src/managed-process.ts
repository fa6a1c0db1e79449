import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { TextTail } from '@ward/testing/cluster';

/** Bytes of each child's combined output kept for diagnostics (the tail wins). */
const OUTPUT_TAIL_BYTES = 64 * 1024;

export interface ManagedProcessOptions {
  /** A short name for messages, e.g. `etcd-m1` or `raft-node-2`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/**
 * A child process the harness owns: its output tail is kept for error messages, and `stop()`
 * sends SIGTERM, waits, then SIGKILLs. Never shares a process group with the test runner's
 * other children, so stopping one never touches another.
 */
export class ManagedProcess {
  readonly name: string;
  readonly options: ManagedProcessOptions;
  private readonly child: ChildProcess;
  private readonly outputTail = new TextTail(OUTPUT_TAIL_BYTES);
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;

  constructor(options: ManagedProcessOptions) {
    this.name = options.name;
    this.options = options;
    this.child = spawn(options.command, [...options.args], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // WARD_PROCESS_LOG_DIR (bench and debugging runs): every process's whole output also goes to
    // <dir>/<name>-<pid>.log.
    const logDir = process.env.WARD_PROCESS_LOG_DIR;
    const logFile = logDir === undefined || logDir === '' ? undefined : join(logDir, `${options.name}-${this.child.pid ?? 'unspawned'}.log`);
    const keep = (chunk: Buffer): void => {
      this.outputTail.append(chunk);
      if (logFile !== undefined) appendFileSync(logFile, chunk);
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolvePromise) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolvePromise();
      });
      this.child.once('error', (error) => {
        keep(Buffer.from(`spawn error: ${error.message}\n`));
        this.exitInfo ??= { code: null, signal: null };
        resolvePromise();
      });
    });
  }

  /** A new process from the same command line and environment (this one must have exited). */
  respawn(): ManagedProcess {
    if (this.alive) throw new Error(`${this.name} is still running`);
    return new ManagedProcess(this.options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True while the process has not exited. */
  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** The last few KiB of stdout+stderr, for failure messages. */
  output(): string {
    return this.outputTail.toString();
  }

  /** Resolves when the process has exited (for whatever reason). */
  waitForExit(): Promise<void> {
    return this.exited;
  }

  /** Sends `signal` (SIGTERM by default), waits up to `graceMs`, then SIGKILLs. Idempotent. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill(signal);
    const timer = setTimeout(() => {
      if (this.alive) this.child.kill('SIGKILL');
    }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Sends a signal without waiting (e.g. SIGSTOP/SIGCONT in fault tests). */
  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }
}

/** Whether a process with this pid exists (signal 0 probes without touching it). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
