import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CodedError } from '@ward/shared/errors';
import { HistoryParseError, InvalidHistoryError, LINEARIZABILITY_ERROR_CODES, LinearizabilityError } from './errors';

describe('error catalogue', () => {
  it('documents exactly the codes the library throws', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = new Set(readme.match(/ERR_TESTING_LIN_[A-Z_]+/g));
    expect([...documented].sort()).toEqual([...LINEARIZABILITY_ERROR_CODES].sort());
  });

  it('gives each class its code, its context fields and the coded base classes', () => {
    const invalid = new InvalidHistoryError(3, 'bad-time', 'operation 3: callTime must be a finite number');
    const parse = new HistoryParseError(7, 'syntax', 'line 7: expected a value');
    expect(invalid).toMatchObject({ code: 'ERR_TESTING_LIN_INVALID_HISTORY', index: 3, reason: 'bad-time', name: 'InvalidHistoryError' });
    expect(parse).toMatchObject({ code: 'ERR_TESTING_LIN_PARSE', line: 7, reason: 'syntax', name: 'HistoryParseError' });
    for (const error of [invalid, parse]) {
      expect(error).toBeInstanceOf(LinearizabilityError);
      expect(error).toBeInstanceOf(CodedError);
    }
  });
});
