import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processActivity, processCpuMicros } from './process-cpu';

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
