import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { STORAGE_ERROR_CODES, StorageError, WalCorruptError } from './errors';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('storage error catalogue', () => {
  it('documents every code in the README, and documents no code that does not exist', () => {
    const documented = new Set(readme.match(/ERR_STORAGE_[A-Z_]+/g));
    expect([...documented].sort()).toEqual([...STORAGE_ERROR_CODES].sort());
  });

  it('errors carry their code and context fields', () => {
    const error = new WalCorruptError('0000000000000001-0000000000000010.wal', 4096, 'record checksum mismatch');
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'ERR_STORAGE_WAL_CORRUPT', file: '0000000000000001-0000000000000010.wal', offset: 4096, name: 'WalCorruptError' });
  });
});
