// The launcher's restart policy (tools/launcher/restart-policy.mjs), without processes or clocks.
import { describe, expect, it } from 'vitest';
import { RESTART_POLICY, classifyExit, nextRestart } from '../launcher/restart-policy.mjs';

describe('nextRestart', () => {
  it('waits 200 ms, then doubles per quick crash up to 10 s, then gives up after 8 in a row', () => {
    const delays: number[] = [];
    let quick = 0;
    for (;;) {
      const decision = nextRestart(quick, 1000);
      quick = decision.quickCrashes;
      if (decision.action === 'give-up') break;
      delays.push(decision.delayMs);
    }
    expect(delays).toEqual([200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
    expect(quick).toBe(RESTART_POLICY.maxQuickCrashes + 1);
  });

  it('starts over at 200 ms once a process stayed up 30 s', () => {
    expect(nextRestart(5, 29_999)).toEqual({ action: 'restart', delayMs: 6400, quickCrashes: 6 });
    expect(nextRestart(5, 30_000)).toEqual({ action: 'restart', delayMs: 200, quickCrashes: 1 });
    expect(nextRestart(RESTART_POLICY.maxQuickCrashes, 60_000)).toEqual({ action: 'restart', delayMs: 200, quickCrashes: 1 });
  });

  it('refuses nonsense', () => {
    expect(() => nextRestart(-1, 0)).toThrow(TypeError);
    expect(() => nextRestart(0, Number.NaN)).toThrow(TypeError);
  });
});

describe('classifyExit', () => {
  const base = { app: 'raft-node', code: 0, signal: null, saidRemoved: true, stopping: false, ready: true };

  it('a raft-node that said it was removed and exited 0 is removed, before or after ready', () => {
    expect(classifyExit(base)).toBe('removed');
    expect(classifyExit({ ...base, ready: false })).toBe('removed');
  });

  it('exit 0 without the removal line, a non-zero code, a signal or another app: a crash once ready', () => {
    expect(classifyExit({ ...base, saidRemoved: false })).toBe('crash');
    expect(classifyExit({ ...base, code: 1 })).toBe('crash');
    expect(classifyExit({ ...base, code: null, signal: 'SIGKILL' })).toBe('crash');
    expect(classifyExit({ ...base, app: 'password-verifier' })).toBe('crash');
  });

  it('before ready it failed to start; while stopping it is expected', () => {
    expect(classifyExit({ ...base, code: 1, ready: false })).toBe('failed-to-start');
    expect(classifyExit({ ...base, code: null, signal: 'SIGTERM', stopping: true })).toBe('stopping');
  });
});
