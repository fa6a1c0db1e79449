import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_MAPPING_ERROR_CODES, ApiMappingError } from './errors';

describe('error catalogue', () => {
  const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  const documented = [...readme.matchAll(/`(ERR_API_MAPPING_[A-Z_]+)`/g)].map((m) => m[1]);

  it('documents every code and documents no code that does not exist', () => {
    expect(new Set(documented)).toEqual(new Set(API_MAPPING_ERROR_CODES));
  });

  it('carries the field and gRPC INVALID_ARGUMENT', () => {
    const error = new ApiMappingError('RangeRequest.limit', 'not a decimal integer');
    expect([error.code, error.field, error.grpcCode]).toEqual(['ERR_API_MAPPING_INVALID_FIELD', 'RangeRequest.limit', 3]);
  });
});
