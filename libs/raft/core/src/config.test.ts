import { SeededRng } from '@ward/shared/clock';
import { describe, expect, it } from 'vitest';
import type { RaftConfig } from './config';
import { resolveRaftConfig } from './config';
import { RaftConfigError } from './errors';
import { MAX_NODE_ID } from './ids';
import { MemoryStorage } from './memory-storage';
import { RawNode } from './raw-node';
import { votersConfState } from './types';

function base(): RaftConfig {
  return { id: 1n, storage: new MemoryStorage(votersConfState([1n, 2n, 3n])), rng: new SeededRng(1) };
}

function fieldOf(config: unknown): string | undefined {
  try {
    new RawNode(config as RaftConfig);
    return undefined;
  } catch (error) {
    if (error instanceof RaftConfigError) return error.field;
    throw error;
  }
}

describe('raft config validation', () => {
  it('fills in defaults: PreVote, CheckQuorum and safe reads on; 10/1 ticks; bounded sizes', () => {
    const resolved = resolveRaftConfig(base());
    expect(resolved).toMatchObject({
      electionTimeoutTicks: 10,
      heartbeatIntervalTicks: 1,
      preVote: true,
      checkQuorum: true,
      readOnlyOption: 'safe',
      maxMessageBytes: 1024 * 1024,
      maxInflightMessages: 256,
      maxUncommittedEntriesBytes: 1024 * 1024 * 1024,
      disableProposalForwarding: false,
      applied: 0,
    });
    expect(resolved.mutations.size).toBe(0);
  });

  it('rejects each bad option with an error naming the field', () => {
    const cases: [Partial<Record<keyof RaftConfig, unknown>>, string][] = [
      [{ id: 0n }, 'id'],
      [{ id: MAX_NODE_ID + 1n }, 'id'],
      [{ id: 1 }, 'id'],
      [{ storage: undefined }, 'storage'],
      [{ storage: {} }, 'storage'],
      [{ rng: undefined }, 'rng'],
      [{ heartbeatIntervalTicks: 0 }, 'heartbeatIntervalTicks'],
      [{ heartbeatIntervalTicks: 1.5 }, 'heartbeatIntervalTicks'],
      [{ electionTimeoutTicks: 1, heartbeatIntervalTicks: 1 }, 'electionTimeoutTicks'],
      [{ electionTimeoutTicks: 5, heartbeatIntervalTicks: 10 }, 'electionTimeoutTicks'],
      [{ electionTimeoutTicks: 10_000_000 }, 'electionTimeoutTicks'],
      [{ maxMessageBytes: -1 }, 'maxMessageBytes'],
      [{ maxInflightMessages: 0 }, 'maxInflightMessages'],
      [{ maxInflightBytes: 10, maxMessageBytes: 100 }, 'maxInflightBytes'],
      [{ maxUncommittedEntriesBytes: 0 }, 'maxUncommittedEntriesBytes'],
      [{ maxCommittedBytesPerReady: 0 }, 'maxCommittedBytesPerReady'],
      [{ maxProposalBytes: 0 }, 'maxProposalBytes'],
      [{ checkQuorum: 'yes' }, 'checkQuorum'],
      [{ preVote: 1 }, 'preVote'],
      [{ readOnlyOption: 'fast' }, 'readOnlyOption'],
      [{ readOnlyOption: 'lease-based', checkQuorum: false }, 'readOnlyOption'],
      [{ applied: -1 }, 'applied'],
      [{ applied: 5 }, 'applied'],
      [{ testOnlyMutations: ['no-such-bug'] }, 'testOnlyMutations'],
    ];
    for (const [override, field] of cases) expect({ override, field: fieldOf({ ...base(), ...override }) }).toEqual({ override, field });
    expect(fieldOf(null)).toBe('config');
  });

  it('accepts lease-based reads together with CheckQuorum', () => {
    expect(fieldOf({ ...base(), readOnlyOption: 'lease-based', checkQuorum: true })).toBeUndefined();
  });

  it('rejects a persisted HardState whose commit index is beyond the log', () => {
    const storage = new MemoryStorage(votersConfState([1n]));
    storage.setHardState({ term: 1, vote: 1n, commit: 3 });
    expect(fieldOf({ ...base(), storage })).toBe('storage');
  });
});
