import { CodedError } from '@ward/shared/errors';

/** Every code a raft/core error can carry (documented in README.md; a test keeps them in step). */
export const RAFT_ERROR_CODES = [
  'ERR_RAFT_CONFIG_INVALID',
  'ERR_RAFT_PROPOSAL_DROPPED',
  'ERR_RAFT_COMPACTED',
  'ERR_RAFT_UNAVAILABLE',
  'ERR_RAFT_SNAPSHOT_OUT_OF_DATE',
  'ERR_RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE',
  'ERR_RAFT_STEP_LOCAL_MESSAGE',
  'ERR_RAFT_STEP_PEER_NOT_FOUND',
  'ERR_RAFT_MESSAGE_INVALID',
  'ERR_RAFT_CODEC_MALFORMED',
  'ERR_RAFT_CONF_CHANGE_INVALID',
] as const;

export type RaftErrorCode = (typeof RAFT_ERROR_CODES)[number];

/** Base class of raft/core's expected operating failures. */
export class RaftError<Code extends RaftErrorCode = RaftErrorCode> extends CodedError<Code> {}

/** The configuration given to `new RawNode` is unusable; `field` names the offending option. */
export class RaftConfigError extends RaftError<'ERR_RAFT_CONFIG_INVALID'> {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super('ERR_RAFT_CONFIG_INVALID', `invalid raft config: ${field}: ${reason}`);
  }
}

/** Why a proposal was not appended. */
export type ProposalDropReason =
  | 'no-leader'
  | 'forwarding-disabled'
  | 'leader-transfer-in-progress'
  | 'uncommitted-size-limit'
  | 'not-a-member'
  | 'entry-too-large'
  | 'invalid-conf-change';

/**
 * A proposal was not appended to any log: the caller may retry (on another node, or later). A
 * proposal that was accepted can still be lost (a leader change); only its commit is an answer.
 */
export class ProposalDroppedError extends RaftError<'ERR_RAFT_PROPOSAL_DROPPED'> {
  constructor(readonly reason: ProposalDropReason) {
    super('ERR_RAFT_PROPOSAL_DROPPED', `raft proposal dropped: ${reason}`);
  }
}

/** Storage: the requested index is older than the first retained entry (compacted away). */
export class CompactedError extends RaftError<'ERR_RAFT_COMPACTED'> {
  constructor(readonly index: number) {
    super('ERR_RAFT_COMPACTED', 'requested index is unavailable due to compaction');
  }
}

/** Storage: the requested index is newer than the last entry. */
export class UnavailableError extends RaftError<'ERR_RAFT_UNAVAILABLE'> {
  constructor(readonly index: number) {
    super('ERR_RAFT_UNAVAILABLE', 'requested entry at index is unavailable');
  }
}

/** Storage: a snapshot older than the one already held was offered. */
export class SnapshotOutOfDateError extends RaftError<'ERR_RAFT_SNAPSHOT_OUT_OF_DATE'> {
  constructor(readonly index: number) {
    super('ERR_RAFT_SNAPSHOT_OUT_OF_DATE', 'requested index is older than the existing snapshot');
  }
}

/** Storage: the snapshot is being built; the leader retries later. */
export class SnapshotTemporarilyUnavailableError extends RaftError<'ERR_RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE'> {
  constructor() {
    super('ERR_RAFT_SNAPSHOT_TEMPORARILY_UNAVAILABLE', 'snapshot is temporarily unavailable');
  }
}

/** `RawNode.step` was given a kind that only the node itself may generate. */
export class StepLocalMessageError extends RaftError<'ERR_RAFT_STEP_LOCAL_MESSAGE'> {
  constructor(readonly messageType: number) {
    super('ERR_RAFT_STEP_LOCAL_MESSAGE', 'raft: cannot step raft local message');
  }
}

/** `RawNode.step` was given a response from a node this node does not track. */
export class StepPeerNotFoundError extends RaftError<'ERR_RAFT_STEP_PEER_NOT_FOUND'> {
  constructor(readonly from: bigint) {
    super('ERR_RAFT_STEP_PEER_NOT_FOUND', 'raft: cannot step as peer not found');
  }
}

/** A message from the network is malformed (bad field type or range); it was not stepped. */
export class MessageInvalidError extends RaftError<'ERR_RAFT_MESSAGE_INVALID'> {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super('ERR_RAFT_MESSAGE_INVALID', `invalid raft message: ${field}: ${reason}`);
  }
}

/** Bytes given to a decoder are not a valid encoding; `offset` is where decoding stopped. */
export class CodecError extends RaftError<'ERR_RAFT_CODEC_MALFORMED'> {
  constructor(
    readonly what: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super('ERR_RAFT_CODEC_MALFORMED', `malformed ${what} at byte ${offset}: ${reason}`);
  }
}

/**
 * A membership change cannot be applied to the current configuration (`reason` says why). A
 * leader refuses such a proposal (ProposalDroppedError 'invalid-conf-change'); `applyConfChange`
 * throws it only for an entry no leader of this library would have appended.
 */
export class ConfChangeError extends RaftError<'ERR_RAFT_CONF_CHANGE_INVALID'> {
  constructor(readonly reason: string) {
    super('ERR_RAFT_CONF_CHANGE_INVALID', `invalid membership change: ${reason}`);
  }
}
