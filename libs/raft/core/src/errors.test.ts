import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hasCode } from '@ward/shared/errors';
import { describe, expect, it } from 'vitest';
import {
  CodecError,
  CompactedError,
  ConfChangeError,
  MessageInvalidError,
  ProposalDroppedError,
  RaftConfigError,
  RAFT_ERROR_CODES,
  RaftError,
  SnapshotOutOfDateError,
  SnapshotTemporarilyUnavailableError,
  StepLocalMessageError,
  StepPeerNotFoundError,
  UnavailableError,
} from './errors';

const ALL = [
  new RaftConfigError('id', 'bad'),
  new ProposalDroppedError('no-leader'),
  new CompactedError(1),
  new UnavailableError(1),
  new SnapshotOutOfDateError(1),
  new SnapshotTemporarilyUnavailableError(),
  new StepLocalMessageError(0),
  new StepPeerNotFoundError(9n),
  new MessageInvalidError('term', 'bad'),
  new CodecError('Message', 3, 'bad'),
  new ConfChangeError('removed all voters'),
];

describe('error catalogue', () => {
  it('every error is a RaftError with its own code and carries its context as fields', () => {
    expect(new Set(ALL.map((e) => e.code)).size).toBe(ALL.length);
    for (const e of ALL) {
      expect(e).toBeInstanceOf(RaftError);
      expect(hasCode(e, e.code)).toBe(true);
    }
    expect(new ProposalDroppedError('uncommitted-size-limit').reason).toBe('uncommitted-size-limit');
    expect(new CodecError('Message', 3, 'x').offset).toBe(3);
  });

  it('the README documents exactly the codes that exist', () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const documented = new Set(readme.match(/ERR_RAFT_[A-Z_]+/g));
    expect([...documented].sort()).toEqual([...RAFT_ERROR_CODES].sort());
    expect(ALL.map((e) => e.code).sort()).toEqual([...RAFT_ERROR_CODES].sort());
  });
});
