import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processActivity, processCpuMicros, waitUntilQuiet } from './process-cpu';

describe('processActivity', () => {
  it("counts this process's read and write system calls and its threads' sleeps", async () => {
    const before = processActivity(process.pid);
    const sink = openSync('/dev/null', 'w');
    const source = openSync('/dev/zero', 'r');
    const buffer = Buffer.alloc(16);
    try {
      for (let i = 0; i < 300; i++) writeSync(sink, buffer);
      for (let i = 0; i < 200; i++) readSync(source, buffer);
    } finally {
      closeSync(sink);
      closeSync(source);
    }
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const after = processActivity(process.pid);
    expect(after.writeCalls - before.writeCalls).toBeGreaterThanOrEqual(300);
    expect(after.readCalls - before.readCalls).toBeGreaterThanOrEqual(200);
    expect(after.wakeups - before.wakeups).toBeGreaterThanOrEqual(5);
  });

  it('gives NaN for a process that is not there', () => {
    const gone = processActivity(2 ** 22 + 1); // above the kernel's largest pid
    expect([gone.readCalls, gone.writeCalls, gone.wakeups].every(Number.isNaN)).toBe(true);
    expect(processCpuMicros(2 ** 22 + 1)).toBeNaN();
  });
});

describe('waitUntilQuiet', () => {
  /** Runs `check` against a child that spins for `busyMs` from its start, then idles. */
  async function withBusyChild(busyMs: number, check: (pid: number) => Promise<void>): Promise<void> {
    const child = spawn(process.execPath, ['-e', `const end = Date.now() + ${busyMs}; while (Date.now() < end); setTimeout(() => {}, 60000);`], { stdio: 'ignore' });
    try {
      await check(child.pid!);
    } finally {
      child.kill();
    }
  }

  it('returns once a process that was busy has gone idle, and not before', () =>
    withBusyChild(1200, async (pid) => {
      const outcome = await waitUntilQuiet([pid], { windowMs: 200, maxCoreShare: 0.1, timeoutMs: 10_000 });
      expect(outcome.quiet).toBe(true);
      expect(outcome.lastCoreShare).toBeLessThanOrEqual(0.1);
      // Busy for 1.2 s from its start (a Node.js start-up included): no quiet sample before ~1 s.
      expect(outcome.waitedMs).toBeGreaterThanOrEqual(1000);
    }));

  it('gives up at its timeout while the process stays busy', () =>
    withBusyChild(60_000, async (pid) => {
      const outcome = await waitUntilQuiet([pid], { windowMs: 200, maxCoreShare: 0.1, timeoutMs: 800 });
      expect(outcome.quiet).toBe(false);
      expect(outcome.lastCoreShare).toBeGreaterThan(0.1);
      expect(outcome.waitedMs).toBeGreaterThanOrEqual(800);
      expect(outcome.waitedMs).toBeLessThan(3000);
    }));
});
