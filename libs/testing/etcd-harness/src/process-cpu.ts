// CPU time and activity of other processes, from /proc (Linux): what a benchmark reports as server
// CPU, system calls and wake-ups per operation. utime + stime (/proc/<pid>/stat) are in clock ticks
// (sysconf(_SC_CLK_TCK), 100 on Linux).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU the process has used so far, in microseconds (NaN when it is gone). */
export function processCpuMicros(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return Number.NaN;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / clockTicksPerSecond();
}

/** What a process has done so far that a benchmark counts per operation besides CPU time. */
export interface ProcessActivity {
  /** Read-class system calls (read, readv, recvmsg, ...): `syscr` of /proc/<pid>/io. */
  readonly readCalls: number;
  /** Write-class system calls (write, writev, sendmsg, ...): `syscw` of /proc/<pid>/io. */
  readonly writeCalls: number;
  /**
   * Voluntary context switches summed over the process's threads (/proc/<pid>/task/<tid>/status):
   * each is a thread going to sleep (an event loop waiting in epoll, a worker waiting for work),
   * so as many wake-ups follow. A thread that exits takes its count with it.
   */
  readonly wakeups: number;
}

const SYSCR = /^syscr: (\d+)$/m;
const SYSCW = /^syscw: (\d+)$/m;
const VOLUNTARY_SWITCHES = /^voluntary_ctxt_switches:\s+(\d+)$/m;

const NO_ACTIVITY: ProcessActivity = Object.freeze({ readCalls: Number.NaN, writeCalls: Number.NaN, wakeups: Number.NaN });

/** The process's counts so far (NaN when it is gone or /proc/<pid>/io is not readable here). */
export function processActivity(pid: number): ProcessActivity {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    let wakeups = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let status: string;
      try {
        status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      } catch {
        continue; // the thread exited meanwhile
      }
      wakeups += Number(VOLUNTARY_SWITCHES.exec(status)?.[1] ?? 0);
    }
    return { readCalls: Number(SYSCR.exec(io)?.[1] ?? Number.NaN), writeCalls: Number(SYSCW.exec(io)?.[1] ?? Number.NaN), wakeups };
  } catch {
    return NO_ACTIVITY;
  }
}

export interface QuietOptions {
  /** Length of each sample (ms). */
  readonly windowMs: number;
  /** Quiet: the processes together used at most this share of one core over a sample. */
  readonly maxCoreShare: number;
  /** Gives up after this long (ms). */
  readonly timeoutMs: number;
}

export interface QuietOutcome {
  readonly quiet: boolean;
  readonly waitedMs: number;
  /** The processes' share of one core over the last sample. */
  readonly lastCoreShare: number;
}

/**
 * Waits until `pids` together stay under `maxCoreShare` of one core over a sample of `windowMs`
 * (a process that is gone counts as idle), or `timeoutMs` passed. A benchmark calls it between
 * cases so that work a case left behind (requests still queued when its clients stopped) is not
 * counted against the next one.
 */
export async function waitUntilQuiet(pids: readonly number[], options: QuietOptions): Promise<QuietOutcome> {
  const started = performance.now();
  const used = (): number => {
    let total = 0;
    for (const pid of pids) {
      const micros = processCpuMicros(pid);
      if (!Number.isNaN(micros)) total += micros;
    }
    return total;
  };
  for (;;) {
    const before = used();
    const sampleStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, options.windowMs));
    const share = (used() - before) / ((performance.now() - sampleStarted) * 1000);
    const waitedMs = performance.now() - started;
    if (share <= options.maxCoreShare || waitedMs >= options.timeoutMs) return { quiet: share <= options.maxCoreShare, waitedMs, lastCoreShare: share };
  }
}
