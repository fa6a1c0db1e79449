import { describe, expect, it } from 'vitest';
import { AssertionFailure, CodedError, assert, assertNever, hasCode } from './index';

class KVCompacted extends CodedError<'ERR_KV_COMPACTED'> {
  constructor(readonly revision: number) {
    super('ERR_KV_COMPACTED', 'revision has been compacted');
  }
}

describe('CodedError', () => {
  it('keeps code, subclass name, context fields and cause', () => {
    const cause = new Error('inner');
    const error = new CodedError('ERR_X_Y', 'outer', { cause });
    expect(error.code).toBe('ERR_X_Y');
    expect(error.cause).toBe(cause);
    const compacted = new KVCompacted(7);
    expect(compacted.name).toBe('KVCompacted');
    expect(compacted.revision).toBe(7);
    expect(compacted).toBeInstanceOf(CodedError);
  });

  it('hasCode discriminates by code, not by message', () => {
    expect(hasCode(new KVCompacted(1), 'ERR_KV_COMPACTED')).toBe(true);
    expect(hasCode(new KVCompacted(1), 'ERR_OTHER')).toBe(false);
    expect(hasCode(new Error('ERR_KV_COMPACTED'), 'ERR_KV_COMPACTED')).toBe(false);
  });
});

describe('assert', () => {
  it('throws AssertionFailure on a false condition and passes a true one', () => {
    expect(() => assert(1 + 1 === 3, 'arithmetic')).toThrow(AssertionFailure);
    expect(() => assert(1 + 1 === 3, 'arithmetic')).toThrow('assertion failed: arithmetic');
    expect(() => assert(true, 'never')).not.toThrow();
  });

  it('assertNever names the unexpected value', () => {
    expect(() => assertNever('x' as never, 'kind')).toThrow('unexpected kind: x');
  });
});
