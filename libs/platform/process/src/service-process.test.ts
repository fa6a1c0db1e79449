import { describe, expect, it } from 'vitest';
import { ConfigError } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { EXIT_CONFIG, configOrExit, runUntilSignalled, type ProcessLike } from './service-process';

const logger = createLogger({ name: 'test', level: 'silent' });

function fakeProcess(): ProcessLike & { exits: number[]; emit(event: string, value?: unknown): void } {
  const listeners = new Map<string, Array<(value?: unknown) => void>>();
  return {
    exits: [],
    on(event, listener) {
      listeners.set(event, [...(listeners.get(event) ?? []), listener]);
      return this;
    },
    exit(code) {
      this.exits.push(code);
    },
    emit(event, value) {
      for (const listener of listeners.get(event) ?? []) listener(value);
    },
  };
}

const flush = () => new Promise((done) => setImmediate(done));

describe('configOrExit', () => {
  it('returns the configuration, or prints a ConfigError and exits 2', () => {
    const proc = fakeProcess();
    expect(configOrExit(() => 42, () => undefined, proc)).toBe(42);
    const printed: string[] = [];
    expect(() => configOrExit(() => { throw new ConfigError('APP_', ['APP_X is required']); }, (m) => printed.push(m), proc)).toThrow(ConfigError);
    expect(printed).toEqual([expect.stringContaining('APP_X is required')]);
    expect(proc.exits).toEqual([EXIT_CONFIG]);
  });

  it('lets any other error through without exiting', () => {
    const proc = fakeProcess();
    expect(() => configOrExit(() => { throw new TypeError('bug'); }, () => undefined, proc)).toThrow(TypeError);
    expect(proc.exits).toEqual([]);
  });
});

describe('runUntilSignalled', () => {
  it('stops once on the first signal and exits 0; a second signal exits 1 at once', async () => {
    const proc = fakeProcess();
    let stops = 0;
    let finish: () => void = () => undefined;
    runUntilSignalled(logger, () => ((stops += 1), new Promise<void>((done) => (finish = done))), proc);
    proc.emit('SIGTERM');
    proc.emit('SIGINT');
    expect(stops).toBe(1);
    expect(proc.exits).toEqual([1]);
    finish();
    await flush();
    expect(proc.exits).toEqual([1, 0]);
  });

  it('exits 1 when the stop fails, and on an unhandled rejection', async () => {
    const proc = fakeProcess();
    runUntilSignalled(logger, () => Promise.reject(new Error('stuck')), proc);
    proc.emit('SIGINT');
    await flush();
    expect(proc.exits).toEqual([1]);
    proc.emit('unhandledRejection', new Error('lost'));
    expect(proc.exits).toEqual([1, 1]);
  });
});
