// Starts real password-verifier processes (tsx, from source) for the integration tests and
// follows their JSON log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const workspaceRoot = resolve(import.meta.dirname, '../../..');
const mainPath = resolve(workspaceRoot, 'apps/password-verifier/src/main.ts');

export interface VerifierProcess {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly output: () => string;
  readonly exited: Promise<number | null>;
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>>;
  /** Signals this process only (by its own pid). */
  signal(signal: NodeJS.Signals): void;
}

export function startVerifierProcess(env: Record<string, string>): VerifierProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', mainPath], {
    cwd: workspaceRoot,
    env: { PATH: process.env['PATH'] ?? '', UV_THREADPOOL_SIZE: '4', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  const waiters: { predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    raw += chunk;
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  return {
    child,
    lines,
    output: () => raw,
    exited,
    waitForLine(predicate, timeoutMs) {
      const seen = lines.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms; output:\n${raw.slice(-2000)}`)), timeoutMs);
        waiters.push({ predicate, resolve: (line) => (clearTimeout(timer), resolveLine(line)) });
      });
    },
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, signal);
    },
  };
}

export const started = (line: Record<string, unknown>): boolean => line['msg'] === 'password verifier started';
