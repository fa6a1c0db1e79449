import { describe, expect, it } from 'vitest';
import { checkExpectation, type StepRecord } from './scenario';

function record(partial: Partial<StepRecord>): StepRecord {
  return { step: 0, label: 'x', exitCode: 0, stdout: '', stderr: '', ...partial };
}

describe('checkExpectation', () => {
  it('accepts exact stdout, ignoring trailing newlines', () => {
    expect(checkExpectation(record({ stdout: 'OK\n' }), { out: 'OK' })).toEqual([]);
  });

  it('rejects different stdout and a non-zero exit where success was expected', () => {
    const problems = checkExpectation(record({ stdout: 'NO', exitCode: 1 }), { out: 'OK' });
    expect(problems).toHaveLength(2);
  });

  it('requires the exact etcdctl error line and a failing exit', () => {
    const denied = record({ exitCode: 1, stderr: 'Error: etcdserver: permission denied\n' });
    expect(checkExpectation(denied, { error: 'etcdserver: permission denied' })).toEqual([]);
    expect(checkExpectation(denied, { error: 'etcdserver: user name is empty' })).toHaveLength(1);
    const succeeded = record({ exitCode: 0, stderr: 'Error: etcdserver: permission denied\n' });
    expect(checkExpectation(succeeded, { error: 'etcdserver: permission denied' })).toHaveLength(1);
  });

  it('checks substrings of stdout and stderr and explicit exit codes', () => {
    const canceled = record({ exitCode: 5, stderr: 'watch was canceled (x)\nError: watch is canceled by the server\n' });
    expect(checkExpectation(canceled, { errIncludes: ['watch was canceled (x)'], error: 'watch is canceled by the server', exit: 5 })).toEqual([]);
    expect(checkExpectation(canceled, { exit: 0 })).toHaveLength(1);
    expect(checkExpectation(record({ stdout: 'a b c' }), { outIncludes: ['b', 'd'] })).toHaveLength(1);
  });

  it('skips the exit check only when told to', () => {
    expect(checkExpectation(record({ exitCode: null }), { exitUnchecked: true })).toEqual([]);
    expect(checkExpectation(record({ exitCode: null }), {})).toHaveLength(1);
  });
});
