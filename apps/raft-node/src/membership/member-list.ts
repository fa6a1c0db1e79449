// The cluster's member list as replicated state: who the members are (id, name, peer address,
// internal API address, learner or voter) and which ids were removed (never to come back, as
// etcd keeps them). It changes only when a membership-change entry is applied, so every member
// holds the same list at the same applied index; snapshots and backups carry it
// (node-snapshot.ts). Membership-change entries carry, as their context, the records of the
// members they add or update and the id of the request that proposed them (conf-change-context.ts).
import { randomBytes } from 'node:crypto';
import { ConfChangeType, type ConfChangeV2, type NodeId } from '@ward/raft/core';
import { MAX_MEMBERS, type MemberSpec } from '../members';

/** One member of the cluster as the replicated state knows it. */
export interface MemberRecord extends MemberSpec {
  readonly isLearner: boolean;
}

/** Most removed ids remembered (a bound on the state; etcd keeps all). */
export const MAX_REMOVED_MEMBERS = 10_000;
/** Most learners at a time (etcd's maxLearners). */
export const MAX_LEARNERS = 1;

/** What an applied membership change did to the list. */
export interface MemberListChange {
  readonly added: readonly MemberRecord[];
  readonly updated: readonly MemberRecord[];
  readonly removed: readonly NodeId[];
}

export class MemberList {
  private constructor(
    private readonly byId: ReadonlyMap<bigint, MemberRecord>,
    private readonly removedIds: ReadonlySet<bigint>,
  ) {}

  /** The voters a cluster is created with (or restored into). */
  static initial(members: readonly MemberSpec[]): MemberList {
    return new MemberList(new Map(members.map((m) => [m.id, { ...m, isLearner: false }])), new Set());
  }

  static of(members: readonly MemberRecord[], removed: readonly bigint[]): MemberList {
    return new MemberList(new Map(members.map((m) => [m.id, m])), new Set(removed));
  }

  /** Members in id order (the order every listing uses). */
  get members(): MemberRecord[] {
    return [...this.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Removed ids in increasing order. */
  get removed(): bigint[] {
    return [...this.removedIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  get(id: bigint): MemberRecord | undefined {
    return this.byId.get(id);
  }

  has(id: bigint): boolean {
    return this.byId.has(id);
  }

  isRemoved(id: bigint): boolean {
    return this.removedIds.has(id);
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * The list after an applied change: records in `context` give new members' (and updated
   * members') attributes; AddNode makes a member a voter, AddLearnerNode a learner, RemoveNode
   * removes it for good, UpdateNode changes only its attributes. A change naming a member the
   * context does not describe and the list does not hold keeps a placeholder record (the list
   * never loses track of a configuration member).
   */
  applied(cc: ConfChangeV2, records: readonly MemberRecord[]): { list: MemberList; change: MemberListChange } {
    const byId = new Map(this.byId);
    const removedIds = new Set(this.removedIds);
    const given = new Map(records.map((r) => [r.id, r]));
    const added: MemberRecord[] = [];
    const updated: MemberRecord[] = [];
    const removed: NodeId[] = [];
    for (const change of cc.changes) {
      const existing = byId.get(change.nodeId);
      const record = given.get(change.nodeId);
      switch (change.type) {
        case ConfChangeType.AddNode:
        case ConfChangeType.AddLearnerNode: {
          const isLearner = change.type === ConfChangeType.AddLearnerNode;
          const base = record ?? existing ?? placeholder(change.nodeId);
          const next = { ...base, isLearner };
          byId.set(change.nodeId, next);
          (existing === undefined ? added : updated).push(next);
          break;
        }
        case ConfChangeType.RemoveNode:
          if (byId.delete(change.nodeId)) removed.push(change.nodeId);
          removedIds.add(change.nodeId);
          break;
        case ConfChangeType.UpdateNode:
          if (existing !== undefined && record !== undefined) {
            const next = { ...record, isLearner: existing.isLearner };
            byId.set(change.nodeId, next);
            updated.push(next);
          }
          break;
      }
    }
    // Oldest removals are forgotten first once the bound is reached (ids are random, so a
    // forgotten one coming back is as unlikely as a collision).
    while (removedIds.size > MAX_REMOVED_MEMBERS) removedIds.delete(removedIds.values().next().value as bigint);
    return { list: new MemberList(byId, removedIds), change: { added, updated, removed } };
  }

  /**
   * A fresh member id as etcd makes them: random 64 bits, never 0, never a present or removed
   * member's id.
   */
  newMemberId(random: () => Uint8Array = () => randomBytes(8)): bigint {
    for (;;) {
      const id = Buffer.from(random()).readBigUInt64BE(0);
      if (id !== 0n && !this.byId.has(id) && !this.removedIds.has(id)) return id;
    }
  }
}

function placeholder(id: bigint): MemberRecord {
  return { id, name: '', peerAddress: '', apiAddress: '', isLearner: false };
}

export { MAX_MEMBERS };
