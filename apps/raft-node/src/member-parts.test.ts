import { describe, expect, it } from 'vitest';
import { EntryType, MemoryStorage, votersConfState } from '@ward/raft/core';
import type { BootedRaft } from '@ward/raft/storage';
import type { RaftNodeConfig } from './config';
import { MAX_COMMITTED_BYTES_PER_READY, createRawNode } from './member-parts';

describe('createRawNode', () => {
  it('hands the apply loop at most MAX_COMMITTED_BYTES_PER_READY of committed entries per Ready', () => {
    // A member that booted with 4 MiB of committed, unapplied entries (a log tail after a restart,
    // or a follower catching up): 128 entries of 32 KiB, about a bulk load's txn each.
    const storage = new MemoryStorage();
    storage.applySnapshot({ data: new Uint8Array(0), metadata: { index: 1, term: 1, confState: votersConfState([1n]) } });
    const entries = Array.from({ length: 128 }, (_, i) => ({ index: i + 2, term: 1, type: EntryType.Normal, data: new Uint8Array(32 * 1024) }));
    storage.append(entries);
    storage.setHardState({ term: 1, vote: 1n, commit: 129 });
    const booted = { storage } as unknown as BootedRaft;
    const config = { memberId: 1n, electionTicks: 10, heartbeatTicks: 1 } as RaftNodeConfig;
    const node = createRawNode(config, booted, 1);
    const applied: number[] = [];
    for (let readies = 0; readies < 100 && node.hasReady(); readies++) {
      const rd = node.ready();
      const bytes = rd.committedEntries.reduce((sum, entry) => sum + entry.data.length, 0);
      expect(bytes).toBeLessThanOrEqual(MAX_COMMITTED_BYTES_PER_READY);
      applied.push(...rd.committedEntries.map((entry) => entry.index));
      node.advance();
    }
    // Every entry handed out once, in order, in more than one Ready.
    expect(applied).toEqual(entries.map((entry) => entry.index));
  });
});
