// Log compaction and snapshot install (paper §7): a follower behind the leader's first index is
// caught up with a snapshot, then from the log.
import { fromUtf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import type { Message } from './message';
import { MessageType } from './message';
import { ProgressState } from './progress';
import { Cluster } from './test/cluster';

function laggingFollowerAfterCompaction(): Cluster {
  const cluster = new Cluster(3);
  cluster.elect(1n);
  cluster.isolate(3n);
  for (let i = 0; i < 30; i++) cluster.propose(1n, `v${i}`);
  // The leader snapshots at its applied index and keeps 5 entries for slow followers.
  const applied = cluster.get(1n).appliedIndex;
  cluster.snapshotAndCompact(1n, applied - 5);
  return cluster;
}

describe('snapshot catch-up', () => {
  it('a follower behind the compacted log receives the snapshot, restores it and continues from the log', () => {
    const cluster = laggingFollowerAfterCompaction();
    const snapshotIndex = cluster.get(1n).storage.snapshot().metadata.index;
    cluster.heal();
    cluster.tickAll(3);
    const snaps = cluster.delivered.filter((m) => m.type === MessageType.Snap && m.to === 3n);
    expect(snaps.length).toBe(1);
    expect(cluster.get(3n).snapshotsApplied.map((s) => s.metadata.index)).toEqual([snapshotIndex]);
    expect(fromUtf8(cluster.get(3n).snapshotsApplied[0]!.data)).toBe(`state@${snapshotIndex}`);
    cluster.propose(1n, 'after');
    expect(cluster.get(3n).appliedIndex).toBe(cluster.get(1n).appliedIndex);
    expect(cluster.appliedData(3n)).toEqual(['after']);
    expect(cluster.raw(1n).status().progress.get(3n)?.state).toBe(ProgressState.Replicate);
  });

  it('a lost snapshot is reported, the follower goes back to probing, and a later attempt succeeds', () => {
    const cluster = laggingFollowerAfterCompaction();
    cluster.heal();
    cluster.filter = (m) => m.type !== MessageType.Snap;
    cluster.tickAll(1);
    // The send failed: the leader is probing again rather than stuck waiting for the snapshot.
    expect(cluster.raw(1n).status().progress.get(3n)?.state).toBe(ProgressState.Probe);
    expect(cluster.get(3n).snapshotsApplied).toEqual([]);
    cluster.heal();
    cluster.tickAll(3);
    expect(cluster.get(3n).snapshotsApplied.length).toBe(1);
    expect(cluster.get(3n).appliedIndex).toBe(cluster.get(1n).appliedIndex);
  });

  it('while a snapshot is in flight the leader sends that follower nothing else', () => {
    const cluster = laggingFollowerAfterCompaction();
    cluster.heal();
    cluster.tick(1n);
    let snap: Message | undefined;
    for (let round = 0; round < 10 && snap === undefined; round++) {
      cluster.processAll();
      snap = cluster.inFlight.find((m) => m.type === MessageType.Snap);
      if (snap === undefined) cluster.deliver();
    }
    expect(snap?.to).toBe(3n);
    // Hold the snapshot "on the wire": not delivered, not yet reported.
    cluster.inFlight = cluster.inFlight.filter((m) => m !== snap);
    const deliveredBefore = cluster.delivered.length;
    cluster.propose(1n, 'meanwhile');
    cluster.tickAll(5);
    const toFollower = cluster.delivered.slice(deliveredBefore).filter((m) => m.to === 3n && (m.type === MessageType.App || m.type === MessageType.Snap));
    expect(toFollower).toEqual([]);
    expect(cluster.raw(1n).status().progress.get(3n)?.state).toBe(ProgressState.Snapshot);
    // The transfer completes: the follower catches up, 'meanwhile' included.
    cluster.raw(3n).step(snap!);
    cluster.raw(1n).reportSnapshot(3n, true);
    cluster.tickAll(3);
    expect(cluster.get(3n).appliedIndex).toBe(cluster.get(1n).appliedIndex);
    expect(cluster.appliedData(3n)).toEqual(['meanwhile']);
  });

  it('a restarted follower resumes from its persisted snapshot', () => {
    const cluster = laggingFollowerAfterCompaction();
    cluster.heal();
    cluster.tickAll(3);
    cluster.restart(3n);
    expect(cluster.raw(3n).basicStatus().commit).toBeGreaterThanOrEqual(cluster.get(3n).storage.snapshot().metadata.index);
    cluster.propose(1n, 'after-restart');
    expect(cluster.get(3n).appliedIndex).toBe(cluster.get(1n).appliedIndex);
  });
});
