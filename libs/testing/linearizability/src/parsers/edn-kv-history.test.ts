import { describe, expect, it } from 'vitest';
import { hasCode } from '@ward/shared/errors';
import type { HistoryParseError } from '../errors';
import { parseEdnKvHistory } from './edn-kv-history';
import { parseEdnMap } from './edn-map';

function failure(text: string): { line: number; reason: string } {
  try {
    parseEdnKvHistory(text);
  } catch (error) {
    expect(hasCode(error, 'ERR_TESTING_LIN_PARSE')).toBe(true);
    const { line, reason } = error as HistoryParseError;
    return { line, reason };
  }
  throw new Error('expected a parse error');
}

describe('parseEdnMap', () => {
  it('reads keyword keys with strings, integers, nil, booleans, keywords and vectors', () => {
    const fields = parseEdnMap('{:process 12, :type :invoke, :key "a \\"b\\"", :value nil, :x [1 -2 :k], :y true}', 1);
    expect(Object.fromEntries(fields)).toEqual({
      process: 12,
      type: { keyword: 'invoke' },
      key: 'a "b"',
      value: null,
      x: [1, -2, { keyword: 'k' }],
      y: true,
    });
  });

  it('refuses what is not a flat map', () => {
    for (const text of ['[1 2]', '{:a 1', '{"a" 1}', '{:a 1 :a 2}', '{:a "x}', '{:a 1} extra', '{:a foo}', '{:a [[[[[[[[[1]]]]]]]]]}']) {
      expect(() => parseEdnMap(text, 3), text).toThrow(expect.objectContaining({ code: 'ERR_TESTING_LIN_PARSE', line: 3, reason: 'syntax' }));
    }
  });
});

describe('parseEdnKvHistory', () => {
  it('pairs invocations and completions per process; a get completion carries the value read', () => {
    const history = parseEdnKvHistory(
      [
        '{:process 0, :type :invoke, :f :append, :key "4", :value "x 0 0 y"}',
        '{:process 1, :type :invoke, :f :get, :key "4", :value nil}',
        '{:process 0, :type :ok, :f :append, :key "4", :value "x 0 0 y"}',
        '',
        '{:process 1, :type :ok, :f :get, :key "4", :value "x 0 0 y"}',
        '{:process 2, :type :invoke, :f :put, :key "5", :value "z"}',
        '{:process 2, :type :fail, :f :put, :key "5", :value "z"}',
        '{:process 3, :type :invoke, :f :put, :key "5", :value "w"}',
        '{:process 3, :type :info, :f :put, :key "5", :value "w"}',
        '{:process 4, :type :invoke, :f :append, :key "6", :value "v"}',
      ].join('\n'),
    );
    expect(history.map((op) => [op.clientId, op.input.kind, op.status, op.callTime])).toEqual([
      [0, 'append', 'ok', 1],
      [1, 'get', 'ok', 2],
      [2, 'put', 'failed', 6],
      [3, 'put', 'unknown', 8],
      [4, 'append', 'unknown', 10],
    ]);
    expect(history[1]).toMatchObject({ output: { kind: 'get', value: 'x 0 0 y' }, returnTime: 5 });
  });

  it('reads a get answered nil as the empty value', () => {
    const history = parseEdnKvHistory(
      '{:process 1, :type :invoke, :f :get, :key "4", :value nil}\n{:process 1, :type :ok, :f :get, :key "4", :value nil}',
    );
    expect(history[0]).toMatchObject({ output: { kind: 'get', value: '' } });
  });

  it('refuses malformed events with the line and a reason', () => {
    const invokeGet = '{:process 1, :type :invoke, :f :get, :key "4", :value nil}';
    expect(failure('{:type :invoke, :f :get, :key "4"}')).toEqual({ line: 1, reason: 'missing-field' });
    expect(failure('{:process "p", :type :invoke, :f :get, :key "4"}')).toEqual({ line: 1, reason: 'bad-field' });
    expect(failure('{:process 1, :type :begin, :f :get, :key "4"}')).toEqual({ line: 1, reason: 'bad-field' });
    expect(failure('{:process 1, :type :invoke, :f :cas, :key "4"}')).toEqual({ line: 1, reason: 'bad-field' });
    expect(failure('{:process 1, :type :invoke, :f :put, :key "4", :value 3}')).toEqual({ line: 1, reason: 'bad-field' });
    expect(failure(`${invokeGet}\n{:process 1, :type :ok, :f :get, :key "5", :value ""}`)).toEqual({ line: 2, reason: 'mismatched-completion' });
    expect(failure(`${invokeGet}\n{:process 1, :type :ok, :f :get, :key "4", :value 7}`)).toEqual({ line: 2, reason: 'bad-field' });
    expect(failure('{:process 1, :type :ok, :f :get, :key "4", :value ""}')).toEqual({ line: 1, reason: 'unmatched-completion' });
    expect(failure('not edn')).toEqual({ line: 1, reason: 'syntax' });
  });
});
