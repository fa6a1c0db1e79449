// One raft-node OS process: spawned with `node <bundle>`, its output appended to a log file,
// started when /healthz answers, stopped by a signal.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { TextTail } from './text-tail';

export interface MemberProcessSpec {
  readonly entry: string;
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  readonly httpPort: number;
  /** How long to wait for /healthz. Default 60 s (the machine may be busy). */
  readonly startTimeoutMs?: number;
}

export interface MemberExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const STDERR_TAIL_CHARS = 16 * 1024;
/** How much of the member's standard output (its log) a failed start quotes. */
const STDOUT_TAIL_CHARS = 4 * 1024;

/** The environment of a member: this process's, minus any RAFT_NODE_* of its own, plus `env`. */
function memberEnvironment(env: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('RAFT_NODE_')) base[name] = value;
  return { ...base, ...env };
}

export class MemberProcess {
  private readonly stderrTail = new TextTail(STDERR_TAIL_CHARS);
  private readonly stdoutTail = new TextTail(STDOUT_TAIL_CHARS);
  private exitInfo: MemberExit | undefined;
  readonly exited: Promise<MemberExit>;

  private constructor(
    private readonly child: ChildProcess,
    log: WriteStream,
  ) {
    child.stdout!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      this.stdoutTail.append(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      this.stderrTail.append(chunk);
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        log.end();
        resolve(this.exitInfo);
      });
    });
  }

  /**
   * Spawns the member and waits for /healthz (throws with its stderr if it exits first). A member
   * that never answers is killed; the error says how the last /healthz attempt failed (refused:
   * not listening yet; a timeout: listening but not answering) and quotes the end of its log.
   */
  static async start(spec: MemberProcessSpec): Promise<MemberProcess> {
    const process = MemberProcess.spawn(spec);
    const timeoutMs = spec.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    let lastAttempt = 'no attempt';
    while (Date.now() < deadline) {
      if (process.exitInfo !== undefined) {
        throw new Error(`${spec.name} exited (${JSON.stringify(process.exitInfo)}) during start:\n${process.stderrTail}`);
      }
      try {
        const response = await fetch(`http://127.0.0.1:${spec.httpPort}/healthz`, { signal: AbortSignal.timeout(1000) });
        if (response.ok) return process;
        lastAttempt = `HTTP ${response.status}`;
      } catch (error) {
        lastAttempt = describeFailure(error);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await process.kill('SIGKILL');
    throw new Error(
      `${spec.name} did not answer /healthz on port ${spec.httpPort} within ${timeoutMs} ms (last attempt: ${lastAttempt}); ` +
        `stderr:\n${process.stderrTail}\nend of its log:\n${process.stdoutTail}`,
    );
  }

  /** Spawns without waiting (for processes expected to fail at boot). */
  static spawn(spec: MemberProcessSpec): MemberProcess {
    const child = spawn(process.execPath, [spec.entry], { env: memberEnvironment(spec.env), stdio: ['ignore', 'pipe', 'pipe'] });
    return new MemberProcess(child, createWriteStream(spec.logFile, { flags: 'a' }));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** The last 16 KiB written to stderr. */
  get stderr(): string {
    return this.stderrTail.toString();
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Sends `signal` and waits for the exit (a stopped process is continued for SIGTERM/SIGINT). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<MemberExit> {
    if (this.running) {
      this.child.kill(signal);
      if (signal !== 'SIGKILL') this.child.kill('SIGCONT');
    }
    return this.exited;
  }
}

/** An error of fetch as one line: its message and its cause's code (ECONNREFUSED, a timeout...). */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  const code = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : undefined;
  return code === undefined ? `${error.name}: ${error.message}` : `${error.name}: ${error.message} (${code})`;
}
