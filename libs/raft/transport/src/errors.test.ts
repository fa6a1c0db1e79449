import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SnapshotSendError, TRANSPORT_ERROR_CODES, TransportError } from './errors';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('transport error catalogue', () => {
  it('documents every code in the README, and documents no code that does not exist', () => {
    const documented = new Set(readme.match(/ERR_TRANSPORT_[A-Z_]+/g));
    expect([...documented].sort()).toEqual([...TRANSPORT_ERROR_CODES].sort());
  });

  it('errors carry their code, context and cause', () => {
    const cause = new Error('stream reset');
    const error = new SnapshotSendError(0xabn, cause);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'ERR_TRANSPORT_SNAPSHOT_FAILED', peer: 0xabn, cause });
  });
});
