import { describe, expect, it } from 'vitest';
import { initialTicksToAdvance } from './election-tick-advance';

const base = { members: 3, connectedPeers: 0, electionTicks: 10, enabled: true, leaderKnown: false };

describe('initialTicksToAdvance (etcd adjustTicks)', () => {
  it('a member alone in its cluster fast-forwards electionTicks - 1 at once, even with the advance off', () => {
    expect(initialTicksToAdvance({ ...base, members: 1 })).toBe(9);
    expect(initialTicksToAdvance({ ...base, members: 1, enabled: false })).toBe(9);
    expect(initialTicksToAdvance({ ...base, members: 1, electionTicks: 2 })).toBe(1);
  });

  it('any other waits until more than one peer is connected, then fast-forwards electionTicks - 2', () => {
    expect(initialTicksToAdvance({ ...base, connectedPeers: 0 })).toBe('wait');
    expect(initialTicksToAdvance({ ...base, connectedPeers: 1 })).toBe('wait');
    expect(initialTicksToAdvance({ ...base, connectedPeers: 2 })).toBe(8);
    expect(initialTicksToAdvance({ ...base, members: 5, connectedPeers: 2, electionTicks: 20 })).toBe(18);
    // Two members: one peer at most, so never more than one connected (as in etcd).
    expect(initialTicksToAdvance({ ...base, members: 2, connectedPeers: 1 })).toBe('wait');
  });

  it('does nothing when turned off, or once a leader is known', () => {
    expect(initialTicksToAdvance({ ...base, connectedPeers: 2, enabled: false })).toBe('never');
    expect(initialTicksToAdvance({ ...base, connectedPeers: 2, leaderKnown: true })).toBe('never');
    expect(initialTicksToAdvance({ ...base, members: 1, leaderKnown: true })).toBe('never');
  });
});
