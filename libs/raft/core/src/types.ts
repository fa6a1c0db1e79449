import type { NodeId } from './ids';
import { NO_NODE } from './ids';

/** A log position. Safe integer; encoded as uint64 on disk and on the wire. */
export type Index = number;
/** A Raft term. Safe integer; encoded as uint64 on disk and on the wire. */
export type Term = number;

/** Kind of a log entry (numbers as in etcd's raftpb). */
export const EntryType = {
  /** Application data; an empty entry is a new leader's no-op. */
  Normal: 0,
  /** A one-step membership change; data: `encodeConfChange`. */
  ConfChange: 1,
  /** A membership change of any shape (joint consensus); data: `encodeConfChangeV2`. */
  ConfChangeV2: 2,
} as const;
export type EntryType = (typeof EntryType)[keyof typeof EntryType];

/** One log entry. Immutable once created: nobody may modify an entry or its data. */
export interface Entry {
  readonly term: Term;
  readonly index: Index;
  readonly type: EntryType;
  readonly data: Uint8Array;
}

/** Bytes an entry occupies in the binary codec besides its data (term, index, type, length). */
export const ENTRY_HEADER_BYTES = 21;

/** Encoded size of an entry: what flow control (max message / inflight bytes) counts. */
export function entrySizeBytes(entry: Entry): number {
  return ENTRY_HEADER_BYTES + entry.data.length;
}

/** Sum of {@link entrySizeBytes}. */
export function entriesSizeBytes(entries: readonly Entry[]): number {
  let total = 0;
  for (let i = 0; i < entries.length; i++) total += ENTRY_HEADER_BYTES + entries[i]!.data.length;
  return total;
}

/** Sum of data lengths: what the uncommitted-bytes limit counts (empty entries are free). */
export function payloadBytes(entries: readonly Entry[]): number {
  let total = 0;
  for (let i = 0; i < entries.length; i++) total += entries[i]!.data.length;
  return total;
}

/** State that must be durable before any message of the same Ready is sent. */
export interface HardState {
  readonly term: Term;
  readonly vote: NodeId;
  readonly commit: Index;
}

export const EMPTY_HARD_STATE: HardState = Object.freeze({ term: 0, vote: NO_NODE, commit: 0 });

export function isEmptyHardState(hs: HardState): boolean {
  return hs.term === 0 && hs.vote === NO_NODE && hs.commit === 0;
}

export function equalHardStates(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

/**
 * Membership, shaped like etcd's ConfState so that joint consensus (ConfChangeV2) and learners fit
 * without changing the type: `votersOutgoing` is the outgoing half of a joint configuration,
 * `learnersNext` the voters to be demoted when the joint configuration is left.
 */
export interface ConfState {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
  readonly votersOutgoing: readonly NodeId[];
  readonly learnersNext: readonly NodeId[];
  readonly autoLeave: boolean;
}

export const EMPTY_CONF_STATE: ConfState = Object.freeze({
  voters: [],
  learners: [],
  votersOutgoing: [],
  learnersNext: [],
  autoLeave: false,
});

/** A ConfState with just these voters. */
export function votersConfState(voters: readonly NodeId[]): ConfState {
  return { ...EMPTY_CONF_STATE, voters: [...voters] };
}

export interface SnapshotMetadata {
  readonly confState: ConfState;
  /** Index of the last entry the snapshot covers. */
  readonly index: Index;
  /** Term of that entry. */
  readonly term: Term;
}

/** An application snapshot and the log position it stands for. */
export interface Snapshot {
  readonly data: Uint8Array;
  readonly metadata: SnapshotMetadata;
}

export const EMPTY_SNAPSHOT: Snapshot = Object.freeze({
  data: new Uint8Array(0),
  metadata: Object.freeze({ confState: EMPTY_CONF_STATE, index: 0, term: 0 }),
});

export function isEmptySnapshot(snapshot: Snapshot | undefined): boolean {
  return snapshot === undefined || snapshot.metadata.index === 0;
}

/** Role of a node. */
export const Role = {
  Follower: 'follower',
  PreCandidate: 'pre-candidate',
  Candidate: 'candidate',
  Leader: 'leader',
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Volatile state: who leads, and what this node is. Need not be persisted. */
export interface SoftState {
  readonly lead: NodeId;
  readonly role: Role;
}

/**
 * The answer to a `readIndex(context)` call: once the application has applied up to `index`, a
 * read of its state machine is linearizable as of the request.
 */
export interface ReadState {
  readonly index: Index;
  readonly context: Uint8Array;
}

/** True when `value` can be an index or a term. */
export function isLogPosition(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
