import { ConfChangeError } from '../errors';
import type { NodeId } from '../ids';
import { compareNodeIds } from '../ids';
import type { ConfState } from '../types';
import type { ConfChangeSingle, ConfChangeV2 } from './conf-change';
import { ConfChangeType, entersJoint, leavesJoint } from './conf-change';

/**
 * A configuration being changed: the incoming and outgoing voter sets, learners, and the voters
 * that become learners when the joint configuration is left. Every id in any set is tracked.
 */
interface Draft {
  incoming: Set<NodeId>;
  outgoing: Set<NodeId>;
  learners: Set<NodeId>;
  learnersNext: Set<NodeId>;
  autoLeave: boolean;
}

function draftOf(cs: ConfState): Draft {
  return {
    incoming: new Set(cs.voters),
    outgoing: new Set(cs.votersOutgoing),
    learners: new Set(cs.learners),
    learnersNext: new Set(cs.learnersNext),
    autoLeave: cs.autoLeave,
  };
}

function sorted(ids: Set<NodeId>): NodeId[] {
  return [...ids].sort(compareNodeIds);
}

function confStateOf(d: Draft): ConfState {
  return { voters: sorted(d.incoming), votersOutgoing: sorted(d.outgoing), learners: sorted(d.learners), learnersNext: sorted(d.learnersNext), autoLeave: d.autoLeave };
}

function isJoint(d: Draft): boolean {
  return d.outgoing.size > 0;
}

function tracked(d: Draft, id: NodeId): boolean {
  return d.incoming.has(id) || d.outgoing.has(id) || d.learners.has(id) || d.learnersNext.has(id);
}

/**
 * The configuration after `cc` is applied to `cs` (etcd's Changer: simple, enter-joint and
 * leave-joint), validated. Pure: the same inputs always give the same ConfState, so every node
 * that applies the same entry reaches the same configuration. Throws ConfChangeError when the
 * change cannot apply (leaving a joint configuration that is not one, entering a joint
 * configuration from one, a simple change of more than one voter, no voter left).
 */
export function changeConfState(cs: ConfState, cc: ConfChangeV2): ConfState {
  checkInvariants(draftOf(cs));
  if (leavesJoint(cc)) return leaveJoint(cs);
  const { joint, autoLeave } = entersJoint(cc);
  return joint ? enterJoint(cs, autoLeave, cc.changes) : simple(cs, cc.changes);
}

/** Enters the joint configuration (old voters outgoing, changed voters incoming). */
export function enterJoint(cs: ConfState, autoLeave: boolean, changes: readonly ConfChangeSingle[]): ConfState {
  const d = draftOf(cs);
  if (isJoint(d)) throw new ConfChangeError('configuration is already joint');
  if (d.incoming.size === 0) throw new ConfChangeError("can't make a zero-voter configuration joint");
  d.outgoing = new Set(d.incoming);
  apply(d, changes);
  d.autoLeave = autoLeave;
  checkInvariants(d);
  return confStateOf(d);
}

/** Leaves the joint configuration: the incoming voters remain, demoted voters become learners. */
export function leaveJoint(cs: ConfState): ConfState {
  const d = draftOf(cs);
  if (!isJoint(d)) throw new ConfChangeError("can't leave a non-joint configuration");
  for (const id of d.learnersNext) d.learners.add(id);
  d.learnersNext.clear();
  d.outgoing.clear();
  d.autoLeave = false;
  checkInvariants(d);
  return confStateOf(d);
}

/** A one-step change: at most one voter added or removed, outside a joint configuration. */
export function simple(cs: ConfState, changes: readonly ConfChangeSingle[]): ConfState {
  const d = draftOf(cs);
  if (isJoint(d)) throw new ConfChangeError("can't apply a simple change in a joint configuration");
  const before = new Set(d.incoming);
  apply(d, changes);
  let differ = 0;
  for (const id of before) if (!d.incoming.has(id)) differ++;
  for (const id of d.incoming) if (!before.has(id)) differ++;
  if (differ > 1) throw new ConfChangeError('more than one voter changed without entering a joint configuration');
  checkInvariants(d);
  return confStateOf(d);
}

function apply(d: Draft, changes: readonly ConfChangeSingle[]): void {
  for (const c of changes) {
    if (c.nodeId === 0n) continue; // etcd ignores changes of node 0
    switch (c.type) {
      case ConfChangeType.AddNode:
        makeVoter(d, c.nodeId);
        break;
      case ConfChangeType.AddLearnerNode:
        makeLearner(d, c.nodeId);
        break;
      case ConfChangeType.RemoveNode:
        remove(d, c.nodeId);
        break;
      case ConfChangeType.UpdateNode:
        break;
      default:
        throw new ConfChangeError(`unknown change type ${String((c as ConfChangeSingle).type)}`);
    }
  }
  if (d.incoming.size === 0) throw new ConfChangeError('removed all voters');
}

function makeVoter(d: Draft, id: NodeId): void {
  d.learners.delete(id);
  d.learnersNext.delete(id);
  d.incoming.add(id);
}

function makeLearner(d: Draft, id: NodeId): void {
  if (d.learners.has(id)) return;
  d.incoming.delete(id);
  d.learners.delete(id);
  d.learnersNext.delete(id);
  // A voter of the outgoing half stays a voter until the joint configuration is left: it is
  // demoted then (learnersNext). Learners and voters never overlap.
  if (d.outgoing.has(id)) d.learnersNext.add(id);
  else d.learners.add(id);
}

function remove(d: Draft, id: NodeId): void {
  d.incoming.delete(id);
  d.learners.delete(id);
  d.learnersNext.delete(id);
  // A voter of the outgoing half stays tracked until the joint configuration is left.
}

/** The invariants of a configuration (also a check of ConfStates read from snapshots). */
export function checkInvariants(d: Draft): void {
  for (const id of d.learnersNext) if (!d.outgoing.has(id)) throw new ConfChangeError(`${id} is in learnersNext but not an outgoing voter`);
  for (const id of d.learners) {
    if (d.incoming.has(id) || d.outgoing.has(id)) throw new ConfChangeError(`${id} is both a learner and a voter`);
    if (d.learnersNext.has(id)) throw new ConfChangeError(`${id} is in learners and learnersNext`);
  }
  if (!isJoint(d)) {
    if (d.learnersNext.size > 0) throw new ConfChangeError('learnersNext outside a joint configuration');
    if (d.autoLeave) throw new ConfChangeError('autoLeave outside a joint configuration');
  }
}

/** Throws ConfChangeError when `cs` is not a consistent configuration. */
export function validateConfState(cs: ConfState): void {
  checkInvariants(draftOf(cs));
}

/** True when `id` is in any part of `cs`. */
export function isMember(cs: ConfState, id: NodeId): boolean {
  return tracked(draftOf(cs), id);
}
