export type { NodeId } from './ids';
export { MAX_NODE_ID, NO_NODE, compareNodeIds, formatNodeId, isNodeId, parseNodeId } from './ids';
export type { ConfState, Entry, HardState, Index, ReadState, Snapshot, SnapshotMetadata, SoftState, Term } from './types';
export {
  EMPTY_CONF_STATE,
  EMPTY_HARD_STATE,
  EMPTY_SNAPSHOT,
  ENTRY_HEADER_BYTES,
  EntryType,
  Role,
  entriesSizeBytes,
  entrySizeBytes,
  equalHardStates,
  isEmptyHardState,
  isEmptySnapshot,
  payloadBytes,
  votersConfState,
} from './types';
export type { Message, MessageFields } from './message';
export { MessageType, isLocalMessageType, isResponseMessageType, message, messageTypeName } from './message';
export type { ProposalDropReason, RaftErrorCode } from './errors';
export {
  CodecError,
  CompactedError,
  MessageInvalidError,
  ProposalDroppedError,
  RAFT_ERROR_CODES,
  RaftConfigError,
  RaftError,
  SnapshotOutOfDateError,
  SnapshotTemporarilyUnavailableError,
  StepLocalMessageError,
  StepPeerNotFoundError,
  UnavailableError,
  ConfChangeError,
} from './errors';
export type { ConfChange, ConfChangeSingle, ConfChangeV2 } from './confchange/conf-change';
export { ConfChangeTransition, ConfChangeType, MAX_CONF_CHANGES, asV2, entersJoint, leavesJoint } from './confchange/conf-change';
export { changeConfState, isMember, validateConfState } from './confchange/changer';
export type { RaftConfig, ResolvedRaftConfig } from './config';
export { RAFT_CONFIG_LIMITS, resolveRaftConfig } from './config';
export type { RaftMutation } from './mutations';
export { RAFT_MUTATIONS } from './mutations';
export type { ReadOnlyOption } from './read-only';
export type { Storage } from './storage';
export { MemoryStorage } from './memory-storage';
export type { Ready } from './ready';
export type { ProgressStatus, Status } from './status';
export { ProgressState } from './progress';
export { RawNode } from './raw-node';
export type { DecodeLimits } from './codec/codec';
export {
  CONF_CHANGE_CODEC_VERSION,
  DEFAULT_DECODE_LIMITS,
  MAX_SNAPSHOT_BYTES,
  MESSAGE_CODEC_VERSION,
  decodeConfChange,
  decodeConfChangeEntry,
  decodeConfChangeV2,
  encodeConfChange,
  encodeConfChangeV2,
  decodeConfState,
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeSnapshot,
  decodeSnapshotMetadata,
  encodeConfState,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeMessagePieces,
  encodeSnapshot,
  encodeSnapshotChunks,
  encodeSnapshotHead,
  encodeSnapshotMetadata,
  decodeSnapshotHead,
  messageSizeBytes,
  snapshotHeadMaxBytes,
} from './codec/codec';
