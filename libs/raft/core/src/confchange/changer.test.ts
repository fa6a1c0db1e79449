// The Changer's transitions, as etcd-io/raft's confchange testdata exercises them: simple changes,
// joint configurations entered and left (auto and explicit), learners and demotions.
import { describe, expect, it } from 'vitest';
import { ConfChangeError } from '../errors';
import type { ConfState } from '../types';
import { EMPTY_CONF_STATE } from '../types';
import { changeConfState, enterJoint, leaveJoint, simple, validateConfState } from './changer';
import type { ConfChangeSingle, ConfChangeV2 } from './conf-change';
import { ConfChangeTransition, ConfChangeType, asV2 } from './conf-change';

const v = (id: number): ConfChangeSingle => ({ type: ConfChangeType.AddNode, nodeId: BigInt(id) });
const l = (id: number): ConfChangeSingle => ({ type: ConfChangeType.AddLearnerNode, nodeId: BigInt(id) });
const r = (id: number): ConfChangeSingle => ({ type: ConfChangeType.RemoveNode, nodeId: BigInt(id) });
const u = (id: number): ConfChangeSingle => ({ type: ConfChangeType.UpdateNode, nodeId: BigInt(id) });

/** A compact text of a configuration, like etcd's: voters=(1 2)&&(1) learners=(3) learners_next=(4) autoleave. */
function show(cs: ConfState): string {
  const ids = (xs: readonly bigint[]): string => `(${xs.join(' ')})`;
  let out = `voters=${ids(cs.voters)}`;
  if (cs.votersOutgoing.length > 0) out += `&&${ids(cs.votersOutgoing)}`;
  if (cs.learners.length > 0) out += ` learners=${ids(cs.learners)}`;
  if (cs.learnersNext.length > 0) out += ` learners_next=${ids(cs.learnersNext)}`;
  if (cs.autoLeave) out += ' autoleave';
  return out;
}

function error(action: () => unknown): string {
  try {
    action();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfChangeError);
    return (e as ConfChangeError).reason;
  }
  throw new Error('expected a ConfChangeError');
}

const cs = (voters: number[], rest: Partial<ConfState> = {}): ConfState => ({ ...EMPTY_CONF_STATE, voters: voters.map(BigInt), ...rest });

describe('simple changes', () => {
  it('add voters one at a time, then learners, then remove', () => {
    let c = simple(EMPTY_CONF_STATE, [v(1)]);
    expect(show(c)).toBe('voters=(1)');
    c = simple(c, [v(2)]);
    expect(show(c)).toBe('voters=(1 2)');
    c = simple(c, [l(3)]);
    expect(show(c)).toBe('voters=(1 2) learners=(3)');
    // Promoting a learner is one voter change.
    c = simple(c, [v(3)]);
    expect(show(c)).toBe('voters=(1 2 3)');
    // Demoting a voter is one voter change too.
    c = simple(c, [l(2)]);
    expect(show(c)).toBe('voters=(1 3) learners=(2)');
    c = simple(c, [r(2), u(1)]);
    expect(show(c)).toBe('voters=(1 3)');
    // Several learners at once change no voter.
    c = simple(c, [l(4), l(5), l(6)]);
    expect(show(c)).toBe('voters=(1 3) learners=(4 5 6)');
    // Removing an unknown node and node 0 are no-ops.
    expect(show(simple(c, [r(42), v(0)]))).toBe(show(c));
  });

  it('refuses two voter changes, removing every voter, and simple changes while joint', () => {
    expect(error(() => simple(cs([1]), [v(2), v(3)]))).toBe('more than one voter changed without entering a joint configuration');
    expect(error(() => simple(cs([1, 2]), [r(1), v(3)]))).toBe('more than one voter changed without entering a joint configuration');
    expect(error(() => simple(cs([1]), [r(1)]))).toBe('removed all voters');
    expect(error(() => simple(EMPTY_CONF_STATE, [l(1)]))).toBe('removed all voters');
    const joint = enterJoint(cs([1, 2]), false, [v(3)]);
    expect(error(() => simple(joint, [v(4)]))).toBe("can't apply a simple change in a joint configuration");
  });
});

describe('joint configurations', () => {
  it('replace a voter: enter joint with auto-leave, leave', () => {
    const j = enterJoint(cs([1, 2, 3]), true, [v(4), r(3)]);
    expect(show(j)).toBe('voters=(1 2 4)&&(1 2 3) autoleave');
    expect(show(leaveJoint(j))).toBe('voters=(1 2 4)');
  });

  it('3 -> 5 -> 3 in two joint steps', () => {
    const grown = leaveJoint(enterJoint(cs([1, 2, 3]), false, [v(4), v(5)]));
    expect(show(grown)).toBe('voters=(1 2 3 4 5)');
    const j = enterJoint(grown, false, [r(1), r(2)]);
    expect(show(j)).toBe('voters=(3 4 5)&&(1 2 3 4 5)');
    expect(show(leaveJoint(j))).toBe('voters=(3 4 5)');
  });

  it('demoting a voter in a joint configuration goes through learners_next', () => {
    const j = enterJoint(cs([1, 2, 3]), false, [l(3), l(4)]);
    expect(show(j)).toBe('voters=(1 2)&&(1 2 3) learners=(4) learners_next=(3)');
    expect(show(leaveJoint(j))).toBe('voters=(1 2) learners=(3 4)');
    // Re-adding the demoted voter before leaving cancels the demotion.
    expect(show(enterJoint(cs([1, 2, 3]), false, [l(3), v(3)]))).toBe('voters=(1 2 3)&&(1 2 3)');
  });

  it('a removed outgoing voter stays a voter of the outgoing half until the joint configuration is left', () => {
    const j = enterJoint(cs([1, 2, 3]), true, [r(1)]);
    expect(j.votersOutgoing).toContain(1n);
    expect(show(leaveJoint(j))).toBe('voters=(2 3)');
  });

  it('refuses to enter twice, to leave when not joint, and to make a zero-voter configuration joint', () => {
    const j = enterJoint(cs([1, 2]), false, [v(3)]);
    expect(error(() => enterJoint(j, false, [v(4)]))).toBe('configuration is already joint');
    expect(error(() => leaveJoint(cs([1, 2])))).toBe("can't leave a non-joint configuration");
    expect(error(() => enterJoint(EMPTY_CONF_STATE, false, [v(1)]))).toBe("can't make a zero-voter configuration joint");
    expect(error(() => enterJoint(cs([1, 2]), false, [r(1), r(2)]))).toBe('removed all voters');
  });
});

describe('changeConfState (the ConfChangeV2 dispatch)', () => {
  const v2 = (transition: ConfChangeV2['transition'], changes: ConfChangeSingle[]): ConfChangeV2 => ({ transition, changes, context: new Uint8Array(0) });

  it('Auto with one change is simple; with several it enters joint with auto-leave; Joint* always enter joint', () => {
    expect(show(changeConfState(cs([1]), v2(ConfChangeTransition.Auto, [v(2)])))).toBe('voters=(1 2)');
    expect(show(changeConfState(cs([1]), v2(ConfChangeTransition.Auto, [v(2), v(3)])))).toBe('voters=(1 2 3)&&(1) autoleave');
    expect(show(changeConfState(cs([1]), v2(ConfChangeTransition.JointImplicit, [v(2)])))).toBe('voters=(1 2)&&(1) autoleave');
    expect(show(changeConfState(cs([1]), v2(ConfChangeTransition.JointExplicit, [v(2)])))).toBe('voters=(1 2)&&(1)');
  });

  it('an empty Auto change leaves the joint configuration; a V1 ConfChange is a one-change V2', () => {
    const j = changeConfState(cs([1]), v2(ConfChangeTransition.JointExplicit, [v(2)]));
    expect(show(changeConfState(j, v2(ConfChangeTransition.Auto, [])))).toBe('voters=(1 2)');
    const v1 = asV2({ type: ConfChangeType.AddLearnerNode, nodeId: 7n, context: new Uint8Array([1]) });
    expect(v1).toEqual({ transition: ConfChangeTransition.Auto, changes: [l(7)], context: new Uint8Array([1]) });
  });

  it('refuses inconsistent configurations (as read from a snapshot)', () => {
    expect(error(() => validateConfState(cs([1], { learners: [1n] })))).toBe('1 is both a learner and a voter');
    expect(error(() => validateConfState(cs([1], { learnersNext: [2n] })))).toBe('2 is in learnersNext but not an outgoing voter');
    expect(error(() => validateConfState(cs([1], { autoLeave: true })))).toBe('autoLeave outside a joint configuration');
  });
});
