import { describe, expect, it } from 'vitest';
import { hasCode } from '@ward/shared/errors';
import type { HistoryParseError } from '../errors';
import { parseJepsenRegisterLog } from './jepsen-register-log';

const log = (lines: string[]): string => lines.map((line) => `INFO  jepsen.util - ${line}`).join('\n');

function parseFailure(text: string): { line: number; reason: string } {
  try {
    parseJepsenRegisterLog(text);
  } catch (error) {
    expect(hasCode(error, 'ERR_TESTING_LIN_PARSE')).toBe(true);
    const { line, reason } = error as HistoryParseError;
    return { line, reason };
  }
  throw new Error('expected a parse error');
}

describe('parseJepsenRegisterLog', () => {
  it('pairs invocations and completions per process, with line numbers as times', () => {
    const history = parseJepsenRegisterLog(
      log(['0\t:invoke\t:write\t4', '1   :invoke :read   nil', '0\t:ok\t:write\t4', '1\t:ok\t:read\t4', '2\t:invoke\t:cas\t[4 1]', '2\t:ok\t:cas\t[4 1]']),
    );
    expect(history).toEqual([
      { clientId: 0, input: { kind: 'write', value: 4 }, callTime: 1, returnTime: 3, status: 'ok', output: { kind: 'write' } },
      { clientId: 1, input: { kind: 'read' }, callTime: 2, returnTime: 4, status: 'ok', output: { kind: 'read', value: 4 } },
      { clientId: 2, input: { kind: 'cas', from: 4, to: 1 }, callTime: 5, returnTime: 6, status: 'ok', output: { kind: 'cas', succeeded: true } },
    ]);
  });

  it('reads nil as null, :fail as did-not-happen, :info and missing completions as unknown', () => {
    const history = parseJepsenRegisterLog(
      log([
        '0\t:invoke\t:read\tnil',
        '0\t:ok\t:read\tnil',
        '1\t:invoke\t:cas\t[0 1]',
        '1\t:fail\t:cas\t[0 1]',
        '2\t:invoke\t:write\t3',
        '2\t:info\t:write\t:timed-out',
        '3\t:invoke\t:read\tnil',
        '3\t:fail\t:read\t:timed-out',
        '7\t:invoke\t:write\t2',
      ]),
    );
    expect(history.map((op) => op.status)).toEqual(['ok', 'failed', 'unknown', 'failed', 'unknown']);
    expect(history[0]).toMatchObject({ output: { kind: 'read', value: null } });
    expect(history[4]).toEqual({ clientId: 7, input: { kind: 'write', value: 2 }, callTime: 9, status: 'unknown' });
  });

  it('can read :fail :cas as a completed cas whose compare failed', () => {
    const text = log(['1\t:invoke\t:cas\t[0 1]', '1\t:fail\t:cas\t[0 1]']);
    expect(parseJepsenRegisterLog(text, { failedCas: 'compare-failed' })[0]).toMatchObject({
      status: 'ok',
      output: { kind: 'cas', succeeded: false },
    });
  });

  it('skips noise: other loggers, nemesis events, blank lines', () => {
    const text = [
      'INFO  jepsen.core - Running test',
      'INFO  jepsen.util - :nemesis\t:info\t:start\tnil',
      '',
      'INFO  jepsen.util - 0\t:invoke\t:write\t1',
      'INFO  jepsen.util - 0\t:ok\t:write\t1',
    ].join('\n');
    expect(parseJepsenRegisterLog(text)).toHaveLength(1);
  });

  it('refuses malformed client events with the line and a reason', () => {
    expect(parseFailure(log(['0\t:invoke\t:write\tx']))).toEqual({ line: 1, reason: 'bad-field' });
    expect(parseFailure(log(['0\t:invoke\t:cas\t[1]']))).toEqual({ line: 1, reason: 'bad-field' });
    expect(parseFailure(log(['0\t:invoke\t:delete\t1']))).toEqual({ line: 1, reason: 'bad-field' });
    expect(parseFailure(log(['0\t:ok\t:read\t1']))).toEqual({ line: 1, reason: 'unmatched-completion' });
    expect(parseFailure(log(['0\t:invoke\t:read\tnil', '0\t:invoke\t:read\tnil']))).toEqual({ line: 2, reason: 'overlapping-invocation' });
    expect(parseFailure(log(['0\t:invoke\t:read\tnil', '0\t:ok\t:write\t1']))).toEqual({ line: 2, reason: 'mismatched-completion' });
    expect(parseFailure(log(['0\t:invoke\t:read\tnil', '0\t:ok\t:read\tfoo']))).toEqual({ line: 2, reason: 'bad-field' });
    expect(parseFailure(log(['0\t:invoke\t:read\tnil', '0\t:done\t:read\t1']))).toEqual({ line: 2, reason: 'bad-field' });
  });

  it('enforces size limits', () => {
    expect(() => parseJepsenRegisterLog('x'.repeat(100), { maxInputChars: 99 })).toThrow(/limit 99/);
    expect(() => parseJepsenRegisterLog(`ok\n${'x'.repeat(100)}`, { maxLineChars: 50 })).toThrow(/line 2/);
  });
});
