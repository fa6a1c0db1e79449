import type { ConfState, Entry, HardState, Message, NodeId, RawNode, Snapshot } from '@ward/raft/core';
import { MessageType, Role } from '@ward/raft/core';
import type { SimDisk } from './sim-disk';
import type { Violation, ViolationKind } from './violations';

/** What the checker needs to see of a node. */
export interface ObservedNode {
  readonly id: NodeId;
  readonly up: boolean;
  readonly node: RawNode | undefined;
  readonly disk: SimDisk;
  /** Index of the snapshot the node's log starts after. */
  snapshotIndex(): number;
  /** Every configuration the node's application recorded (at boot, applying changes and snapshots), in order. */
  readonly confHistory: readonly ConfState[];
}

const TERM_BITS = 2 ** 21;

function bytesHash(data: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  return h >>> 0;
}

function chain(prev: number, term: number, dataHash: number): number {
  let h = Math.imul(prev ^ term, 0x85ebca6b);
  h = Math.imul(h ^ dataHash ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Per-node rolling hashes of the persisted log: entry base+1+k has hash hashes[k]. */
interface LogHashes {
  base: number;
  baseHash: number;
  hashes: number[];
}

/**
 * Raft's safety properties (paper Figure 3) plus durability rules, checked incrementally after
 * every simulator event:
 * - election safety: at most one leader per term;
 * - log matching: one (index, term) always has the same prefix (rolling hash per entry);
 * - leader completeness: a new leader holds the newest committed entry;
 * - state machine safety: one index is applied with one entry everywhere;
 * - the newest committed entry is durable on a quorum; commit/applied never regress;
 * - a vote once cast in a term never changes; term and vote acted on survive a restart.
 */
export class SafetyChecker {
  readonly violations: Violation[] = [];
  tick = 0;
  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly leadersChecked = new Set<string>();
  private readonly entryHashes = new Map<number, number>();
  private readonly logs = new Map<NodeId, LogHashes>();
  private readonly appliedTerm: number[] = [];
  private readonly appliedHash: number[] = [];
  private readonly votes = new Map<NodeId, Map<number, NodeId>>();
  private readonly maxTermSent = new Map<NodeId, number>();
  private readonly lastGrant = new Map<NodeId, { term: number; candidate: NodeId }>();
  private readonly committedTermAt: number[] = [];
  committedIndex = 0;
  committedTerm = 0;

  /**
   * The configurations the newest commit point may have been counted with: those the node that
   * first showed it had during the event that moved its commit index (changes may be applied in
   * the same event, before or after the commit index moved).
   */
  private commitConfigs: readonly ConfState[];
  /** Per node: how much of its confHistory the checker had seen by the end of its last event. */
  private readonly confSeen = new Map<NodeId, number>();
  private readonly holds = new Map<NodeId, boolean>();

  constructor(initial: ConfState) {
    this.commitConfigs = [initial];
  }

  fail(kind: ViolationKind, detail: string): void {
    if (this.violations.length < 100) this.violations.push({ kind, tick: this.tick, detail });
  }

  /** After any event on `n`: leaders, commit points. */
  observe(n: ObservedNode): void {
    if (!n.up || n.node === undefined) return;
    const s = n.node.basicStatus();
    if (s.role === Role.Leader) this.observeLeader(n, s.term);
    if (s.commit > 0) this.observeCommit(n, s.commit);
    this.confSeen.set(n.id, n.confHistory.length);
  }

  /** The configurations `n` had during its latest event: the one it ended the previous with, and any since. */
  private configsOfEvent(n: ObservedNode): readonly ConfState[] {
    const seen = this.confSeen.get(n.id) ?? 1;
    return n.confHistory.slice(Math.max(0, Math.min(seen, n.confHistory.length) - 1));
  }

  private observeLeader(n: ObservedNode, term: number): void {
    const known = this.leaderOfTerm.get(term);
    if (known !== undefined && known !== n.id) this.fail('election-safety', `term ${term} has leaders ${known} and ${n.id}`);
    if (known === undefined) this.leaderOfTerm.set(term, n.id);
    const key = `${n.id}:${term}`;
    if (this.leadersChecked.has(key)) return;
    this.leadersChecked.add(key);
    const c = this.committedIndex;
    if (c === 0 || c <= n.snapshotIndex()) return;
    const t = n.node!.termAt(c);
    if (t !== this.committedTerm) this.fail('leader-completeness', `leader ${n.id} of term ${term} has term ${t} at committed index ${c} (committed term ${this.committedTerm})`);
  }

  private observeCommit(n: ObservedNode, commit: number): void {
    const term = n.node!.termAt(commit);
    if (term === undefined) return;
    const recorded = this.committedTermAt[commit];
    if (recorded === undefined) this.committedTermAt[commit] = term;
    else if (recorded !== term) this.fail('state-machine-safety', `index ${commit} committed with term ${recorded} and, on ${n.id}, term ${term}`);
    if (commit > this.committedIndex) {
      this.committedIndex = commit;
      this.committedTerm = term;
      this.commitConfigs = this.configsOfEvent(n);
    }
  }

  /**
   * The newest committed entry must be durable on a quorum of disks: a majority of each voter
   * half of a configuration it can have been counted with.
   */
  checkDurability(nodes: readonly ObservedNode[]): void {
    const c = this.committedIndex;
    if (c === 0) return;
    const holds = this.holds;
    let count = 0;
    for (const n of nodes) {
      const h = n.disk.durablyHolds(c, this.committedTerm);
      holds.set(n.id, h);
      if (h) count++;
    }
    const quorate = (voters: readonly NodeId[]): boolean => {
      let yes = 0;
      for (const id of voters) if (holds.get(id) === true) yes++;
      return voters.length === 0 || yes >= (voters.length >> 1) + 1;
    };
    for (const cs of this.commitConfigs) if (quorate(cs.voters) && quorate(cs.votersOutgoing)) return;
    const voters = this.commitConfigs[0]!.voters;
    this.fail('committed-entry-not-durable', `committed ${c}@${this.committedTerm} is durable on ${count} nodes, quorum ${(voters.length >> 1) + 1} of ${voters.length} voters`);
  }

  /** A HardState the node now acts on (persisted, or claimed so): votes never change within a term. */
  onHardState(id: NodeId, hs: HardState): void {
    if (hs.vote === 0n) return;
    let byTerm = this.votes.get(id);
    if (byTerm === undefined) this.votes.set(id, (byTerm = new Map()));
    const previous = byTerm.get(hs.term);
    if (previous === undefined) byTerm.set(hs.term, hs.vote);
    else if (previous !== hs.vote) this.fail('vote-changed-in-term', `node ${id} voted ${previous} then ${hs.vote} in term ${hs.term}`);
  }

  /** Every message leaving a node. */
  onSend(id: NodeId, m: Message): void {
    if (m.type === MessageType.PreVote || m.type === MessageType.PreVoteResp || m.term === 0) return;
    if (m.term > (this.maxTermSent.get(id) ?? 0)) this.maxTermSent.set(id, m.term);
    if (m.type === MessageType.VoteResp && !m.reject) this.lastGrant.set(id, { term: m.term, candidate: m.to });
  }

  /** At restart: what the node acted on before the crash must have been durable. */
  onRestart(id: NodeId, hs: HardState): void {
    const sent = this.maxTermSent.get(id) ?? 0;
    if (hs.term < sent) this.fail('term-not-durable', `node ${id} restarted at term ${hs.term} after sending at term ${sent}`);
    const grant = this.lastGrant.get(id);
    if (grant !== undefined && grant.term === hs.term && hs.vote !== grant.candidate) {
      this.fail('vote-not-durable', `node ${id} granted ${grant.candidate} in term ${grant.term} but restarted with vote ${hs.vote}`);
    }
  }

  /** Entries (and a snapshot) the node just persisted: log matching, incrementally. */
  onPersisted(id: NodeId, snapshot: Snapshot | undefined, entries: readonly Entry[]): void {
    if (snapshot !== undefined) this.resetLog(id, snapshot.metadata.index, snapshot.metadata.term);
    let log = this.logs.get(id);
    if (log === undefined) this.logs.set(id, (log = { base: 0, baseHash: 0, hashes: [] }));
    for (const e of entries) {
      if (e.index <= log.base) continue;
      const position = e.index - log.base - 1;
      if (position > log.hashes.length) {
        this.fail('log-matching', `node ${id} persisted ${e.index} after a gap (last ${log.base + log.hashes.length})`);
        return;
      }
      log.hashes.length = position;
      const prev = position === 0 ? log.baseHash : log.hashes[position - 1]!;
      const h = chain(prev, e.term, bytesHash(e.data));
      log.hashes.push(h);
      this.register(id, e.index, e.term, h);
    }
  }

  private register(id: NodeId, index: number, term: number, h: number): void {
    const key = index * TERM_BITS + term;
    const known = this.entryHashes.get(key);
    if (known === undefined) this.entryHashes.set(key, h);
    else if (known !== h) this.fail('log-matching', `entry ${index}@${term} on node ${id} differs from (or has a different prefix than) another node's`);
  }

  /** The node's log now starts after (index, term), from a snapshot or a restart. */
  resetLog(id: NodeId, index: number, term: number): void {
    const known = this.entryHashes.get(index * TERM_BITS + term);
    this.logs.set(id, { base: index, baseHash: known ?? chain(0x5eed, term, index), hashes: [] });
  }

  /** A node applied `e`: one index, one entry, everywhere. */
  onApply(id: NodeId, e: Entry, previousApplied: number): void {
    if (e.index !== previousApplied + 1) this.fail('applied-regressed', `node ${id} applied ${e.index} after ${previousApplied}`);
    const h = bytesHash(e.data);
    const term = this.appliedTerm[e.index];
    if (term === undefined) {
      this.appliedTerm[e.index] = e.term;
      this.appliedHash[e.index] = h;
    } else if (term !== e.term || this.appliedHash[e.index] !== h) {
      this.fail('state-machine-safety', `node ${id} applied ${e.index}@${e.term}, another node applied ${e.index}@${term} (or different data)`);
    }
  }

  /** Leaders seen per term (for liveness reports). */
  leaderTerms(): number {
    return this.leaderOfTerm.size;
  }
}
