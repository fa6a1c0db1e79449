import type { NodeId } from '../ids';

/** What one membership change does to one node (numbers as in etcd's raftpb). */
export const ConfChangeType = {
  /** Make the node a voter (a learner is promoted; a new node joins as a voter). */
  AddNode: 0,
  /** Remove the node from the configuration. */
  RemoveNode: 1,
  /** No change to the configuration (the application may use it to update, e.g., addresses). */
  UpdateNode: 2,
  /** Make the node a learner (a voter is demoted; in a joint configuration, when it is left). */
  AddLearnerNode: 3,
} as const;
export type ConfChangeType = (typeof ConfChangeType)[keyof typeof ConfChangeType];

/** How a ConfChangeV2 moves between configurations. */
export const ConfChangeTransition = {
  /**
   * One change: a simple, one-step change when it changes at most one voter; otherwise a joint
   * configuration that the leader leaves on its own once it is applied (auto-leave).
   */
  Auto: 0,
  /** Always through a joint configuration, left automatically. */
  JointImplicit: 1,
  /** Always through a joint configuration, left only by an explicit empty ConfChangeV2. */
  JointExplicit: 2,
} as const;
export type ConfChangeTransition = (typeof ConfChangeTransition)[keyof typeof ConfChangeTransition];

/** One change of a ConfChangeV2. */
export interface ConfChangeSingle {
  readonly type: ConfChangeType;
  readonly nodeId: NodeId;
}

/** The one-step membership change (etcd's ConfChange): data of an `EntryType.ConfChange` entry. */
export interface ConfChange {
  readonly type: ConfChangeType;
  readonly nodeId: NodeId;
  /** Opaque to raft: the application's description of the change (for example the member's URLs). */
  readonly context: Uint8Array;
}

/**
 * A membership change of any shape (etcd's ConfChangeV2): data of an `EntryType.ConfChangeV2`
 * entry. With no changes and the Auto transition it leaves the current joint configuration.
 */
export interface ConfChangeV2 {
  readonly transition: ConfChangeTransition;
  readonly changes: readonly ConfChangeSingle[];
  readonly context: Uint8Array;
}

/** Most single changes in one ConfChangeV2 (a configuration is small; this bounds the work of one apply). */
export const MAX_CONF_CHANGES = 64;

export function isConfChangeV2(cc: ConfChange | ConfChangeV2): cc is ConfChangeV2 {
  return 'changes' in cc;
}

/** A ConfChange as the equivalent ConfChangeV2 (one change, Auto transition). */
export function asV2(cc: ConfChange | ConfChangeV2): ConfChangeV2 {
  if (isConfChangeV2(cc)) return cc;
  return { transition: ConfChangeTransition.Auto, changes: [{ type: cc.type, nodeId: cc.nodeId }], context: cc.context };
}

/** True when the change leaves a joint configuration (no changes, Auto transition). */
export function leavesJoint(cc: ConfChangeV2): boolean {
  return cc.transition === ConfChangeTransition.Auto && cc.changes.length === 0;
}

/**
 * Whether the change goes through a joint configuration, and if so whether that configuration
 * is left automatically. Auto with at most one change is a simple change.
 */
export function entersJoint(cc: ConfChangeV2): { joint: boolean; autoLeave: boolean } {
  if (cc.transition === ConfChangeTransition.Auto && cc.changes.length <= 1) return { joint: false, autoLeave: false };
  return { joint: true, autoLeave: cc.transition !== ConfChangeTransition.JointExplicit };
}

export function isConfChangeType(value: unknown): value is ConfChangeType {
  return value === 0 || value === 1 || value === 2 || value === 3;
}

export function isConfChangeTransition(value: unknown): value is ConfChangeTransition {
  return value === 0 || value === 1 || value === 2;
}
