import { describe, expect, it } from 'vitest';
import { hasCode } from '@ward/shared/errors';
import { checkLinearizability } from './check';
import { HistoryRecorder } from './history-recorder';
import type { RegisterInput, RegisterOutput } from './models/register';
import { registerModel } from './models/register';

describe('HistoryRecorder', () => {
  it('records call and return times from one source and resolves each operation once', () => {
    let tick = 0;
    const recorder = new HistoryRecorder<RegisterInput, RegisterOutput>(() => tick++);
    const write = recorder.invoke(1, { kind: 'write', value: 5 });
    const read = recorder.invoke(2, { kind: 'read' });
    const cas = recorder.invoke(3, { kind: 'cas', from: 1, to: 2 });
    const lost = recorder.invoke(4, { kind: 'write', value: 6 });
    const open = recorder.invoke(5, { kind: 'write', value: 7 });
    recorder.complete(read, { kind: 'read', value: 5 });
    recorder.complete(write, { kind: 'write' });
    recorder.fail(cas);
    recorder.lose(lost);
    expect(() => recorder.complete(write, { kind: 'write' })).toThrow(TypeError);
    const history = recorder.history();
    expect(history.map((op) => [op.clientId, op.status, op.callTime, op.returnTime])).toEqual([
      [1, 'ok', 0, 6],
      [2, 'ok', 1, 5],
      [3, 'failed', 2, 7],
      [4, 'unknown', 3, 8],
      [5, 'unknown', 4, undefined],
    ]);
    expect(open).toBe(4);
    expect(checkLinearizability(registerModel, history).verdict).toBe('ok');
  });

  it('refuses a time source that goes backwards and too many operations', () => {
    const times = [5, 4];
    const recorder = new HistoryRecorder<RegisterInput, RegisterOutput>(() => times.shift() ?? 0);
    recorder.invoke(0, { kind: 'read' });
    const backwards = (() => {
      try {
        recorder.invoke(0, { kind: 'read' });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(hasCode(backwards, 'ERR_TESTING_LIN_INVALID_HISTORY')).toBe(true);
    expect(backwards).toMatchObject({ reason: 'bad-time' });
    const clock = new HistoryRecorder<RegisterInput, RegisterOutput>(() => 1, { maxOperations: 1 });
    clock.invoke(0, { kind: 'read' });
    expect(() => clock.invoke(0, { kind: 'read' })).toThrow(expect.objectContaining({ reason: 'too-many-operations' }));
    const broken = new HistoryRecorder<RegisterInput, RegisterOutput>(() => Number.NaN);
    expect(() => broken.invoke(0, { kind: 'read' })).toThrow(expect.objectContaining({ reason: 'bad-time' }));
  });
});
