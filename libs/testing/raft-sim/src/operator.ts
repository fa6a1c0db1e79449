import type { Rng } from '@ward/shared/clock';
import type { ConfChangeSingle, ConfChangeV2, ConfState, NodeId } from '@ward/raft/core';
import { ConfChangeTransition, ConfChangeType } from '@ward/raft/core';
import type { SimProfile } from './profile';
import type { SimNode } from './sim-node';

/** What the operator needs from the simulation. */
export interface OperatorHost {
  now(): number;
  nodes(): readonly SimNode[];
  /** The live node that leads with a configuration every member can see, if any. */
  leader(): SimNode | undefined;
}

/** Counters of the operator's work. */
export interface OperatorStats {
  proposed: number;
  /** Changes whose configuration the leader later showed. */
  applied: number;
  raced: number;
  joint: number;
  leaderRemovals: number;
  learnersAdded: number;
  promotions: number;
  removals: number;
  /** Voters made learners (the leader's configuration may go through learnersNext). */
  demotions: number;
  /** Times the leader's configuration went from minVoters voters to maxVoters and back. */
  growShrinkCycles: number;
}

const NO_CONTEXT = new Uint8Array(0);

/**
 * An operator changing the membership while clients work and faults strike: adds a learner (a
 * spare machine), promotes a learner once it has caught up, removes or demotes a voter (sometimes
 * the leader), replaces a voter by a learner in one joint change, grows to `maxVoters` and shrinks to
 * `minVoters` by joint changes of two voters. It waits for each change to show in the leader's
 * configuration (or a timeout) before the next, except when it races.
 */
export class MembershipOperator {
  readonly stats: OperatorStats = { proposed: 0, applied: 0, raced: 0, joint: 0, leaderRemovals: 0, learnersAdded: 0, promotions: 0, removals: 0, demotions: 0, growShrinkCycles: 0 };
  private grown = false;
  private readonly used = new Set<NodeId>();
  private waiting: { readonly since: number; readonly from: string } | undefined;
  private enabled = true;

  constructor(
    private readonly config: NonNullable<SimProfile['membership']>,
    private readonly rng: Rng,
    private readonly host: OperatorHost,
  ) {
    for (let i = 1; i <= config.initialVoters; i++) this.used.add(BigInt(i));
  }

  stop(): void {
    this.enabled = false;
  }

  step(): void {
    const leader = this.host.leader();
    if (leader === undefined || leader.node === undefined) return;
    const cs = leader.node.confState();
    const shown = confKey(cs);
    if (cs.votersOutgoing.length === 0 && cs.voters.length === this.config.maxVoters) this.grown = true;
    if (cs.votersOutgoing.length === 0 && cs.voters.length === this.config.minVoters && this.grown) {
      this.grown = false;
      this.stats.growShrinkCycles++;
    }
    if (this.waiting !== undefined) {
      if (shown !== this.waiting.from) {
        this.stats.applied++;
        this.waiting = undefined;
      } else if (this.host.now() - this.waiting.since >= this.config.changeTimeoutTicks) {
        this.waiting = undefined;
      }
    }
    if (!this.enabled || this.rng.nextFloat() >= this.config.changeProbability) return;
    const racing = this.waiting !== undefined;
    if (racing && this.rng.nextFloat() >= this.config.raceProbability) return;
    const cc = this.plan(leader, cs);
    if (cc === undefined) return;
    try {
      leader.node.proposeConfChange(cc);
    } catch {
      return; // dropped (a transfer in progress, no longer leader): try again later
    }
    leader.pump();
    this.stats.proposed++;
    if (racing) this.stats.raced++;
    else this.waiting = { since: this.host.now(), from: shown };
  }

  /** The next change for configuration `cs`, or undefined if none fits now. */
  private plan(leader: SimNode, cs: ConfState): ConfChangeV2 | undefined {
    const { minVoters, maxVoters } = this.config;
    if (cs.votersOutgoing.length > 0) {
      // Joint: leave it (explicit changes) or wait for the leader to (auto-leave).
      return cs.autoLeave ? undefined : change(ConfChangeTransition.Auto, []);
    }
    const voters = cs.voters;
    const ready = cs.learners.filter((id) => this.caughtUp(leader, id));
    const spare = this.host.nodes().find((n) => !this.used.has(n.id) && n.up);
    const options: (() => ConfChangeV2 | undefined)[] = [];
    if (spare !== undefined && cs.learners.length < 2) {
      options.push(() => {
        this.used.add(spare.id);
        this.stats.learnersAdded++;
        return change(ConfChangeTransition.Auto, [{ type: ConfChangeType.AddLearnerNode, nodeId: spare.id }]);
      });
    }
    if (ready.length > 0 && voters.length < maxVoters) {
      options.push(() => {
        this.stats.promotions++;
        return change(ConfChangeTransition.Auto, [{ type: ConfChangeType.AddNode, nodeId: this.pick(ready) }]);
      });
    }
    if (ready.length >= 2 && voters.length + 2 <= maxVoters) {
      // Grow by two voters at once: a joint change, left automatically or explicitly.
      options.push(() => {
        this.stats.promotions += 2;
        this.stats.joint++;
        const transition = this.rng.nextFloat() < 0.5 ? ConfChangeTransition.Auto : ConfChangeTransition.JointExplicit;
        return change(transition, [ready[0]!, ready[1]!].map((id) => ({ type: ConfChangeType.AddNode, nodeId: id })));
      });
    }
    if (voters.length > minVoters) {
      options.push(() => {
        const id = this.pick(voters);
        this.stats.removals++;
        if (id === leader.id) this.stats.leaderRemovals++;
        return change(ConfChangeTransition.Auto, [{ type: ConfChangeType.RemoveNode, nodeId: id }]);
      });
    }
    if (voters.length - 2 >= minVoters) {
      options.push(() => {
        const first = this.pick(voters);
        const second = this.pick(voters.filter((id) => id !== first));
        this.stats.removals += 2;
        this.stats.joint++;
        if (first === leader.id || second === leader.id) this.stats.leaderRemovals++;
        return change(ConfChangeTransition.JointImplicit, [first, second].map((id) => ({ type: ConfChangeType.RemoveNode, nodeId: id })));
      });
    }
    if (voters.length > minVoters) {
      // Demote a voter to a learner: one step, or in a joint change (through learnersNext).
      options.push(() => {
        const id = this.pick(voters);
        this.stats.demotions++;
        if (id === leader.id) this.stats.leaderRemovals++;
        const joint = this.rng.nextFloat() < 0.5;
        if (joint) this.stats.joint++;
        return change(joint ? ConfChangeTransition.JointImplicit : ConfChangeTransition.Auto, [{ type: ConfChangeType.AddLearnerNode, nodeId: id }]);
      });
    }
    if (ready.length > 0) {
      // Replace a voter by a caught-up learner in one joint change.
      options.push(() => {
        const out = this.pick(voters);
        this.stats.promotions++;
        this.stats.removals++;
        this.stats.joint++;
        if (out === leader.id) this.stats.leaderRemovals++;
        return change(ConfChangeTransition.Auto, [
          { type: ConfChangeType.AddNode, nodeId: this.pick(ready) },
          { type: ConfChangeType.RemoveNode, nodeId: out },
        ]);
      });
    }
    if (options.length === 0) return undefined;
    return options[this.rng.nextInt(options.length)]!();
  }

  /** A learner is promotable when the leader saw it within a few entries of its log (etcd: 90%). */
  private caughtUp(leader: SimNode, id: NodeId): boolean {
    const pr = leader.node!.status().progress.get(id);
    return pr !== undefined && pr.match + 5 >= leader.node!.basicStatus().lastIndex;
  }

  private pick(ids: readonly NodeId[]): NodeId {
    return ids[this.rng.nextInt(ids.length)]!;
  }
}

function change(transition: ConfChangeV2['transition'], changes: ConfChangeSingle[]): ConfChangeV2 {
  return { transition, changes, context: NO_CONTEXT };
}

/** A configuration as a comparable string. */
export function confKey(cs: ConfState): string {
  return `${cs.voters.join(',')}|${cs.votersOutgoing.join(',')}|${cs.learners.join(',')}|${cs.learnersNext.join(',')}|${cs.autoLeave}`;
}
