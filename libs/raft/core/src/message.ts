import { EMPTY_BYTES } from '@ward/shared/bytes';
import type { NodeId } from './ids';
import { NO_NODE } from './ids';
import type { Entry, Index, Snapshot, Term } from './types';

/**
 * Message kinds. The numbers are etcd raftpb's, so traces and encodings line up with etcd's.
 * Local kinds (Hup, Beat, Unreachable, SnapStatus, CheckQuorum, ForgetLeader) never travel
 * between nodes: the codec refuses them and `RawNode.step` rejects them.
 */
export const MessageType = {
  Hup: 0,
  Beat: 1,
  Prop: 2,
  App: 3,
  AppResp: 4,
  Vote: 5,
  VoteResp: 6,
  Snap: 7,
  Heartbeat: 8,
  HeartbeatResp: 9,
  Unreachable: 10,
  SnapStatus: 11,
  CheckQuorum: 12,
  TransferLeader: 13,
  TimeoutNow: 14,
  ReadIndex: 15,
  ReadIndexResp: 16,
  PreVote: 17,
  PreVoteResp: 18,
  ForgetLeader: 23,
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

const NAMES = new Map<number, string>(Object.entries(MessageType).map(([name, value]) => [value, `Msg${name}`]));

/** `MsgApp`, `MsgVoteResp`, ... as etcd prints them. */
export function messageTypeName(type: number): string {
  return NAMES.get(type) ?? `MsgUnknown(${type})`;
}

export function isMessageType(value: number): value is MessageType {
  return NAMES.has(value);
}

const LOCAL_TYPES: ReadonlySet<number> = new Set([
  MessageType.Hup,
  MessageType.Beat,
  MessageType.Unreachable,
  MessageType.SnapStatus,
  MessageType.CheckQuorum,
  MessageType.ForgetLeader,
]);

/** Kinds that only a node sends to itself. */
export function isLocalMessageType(type: MessageType): boolean {
  return LOCAL_TYPES.has(type);
}

const RESPONSE_TYPES: ReadonlySet<number> = new Set([
  MessageType.AppResp,
  MessageType.VoteResp,
  MessageType.HeartbeatResp,
  MessageType.ReadIndexResp,
  MessageType.PreVoteResp,
]);

/** Kinds that answer a request of the current leader or candidate. */
export function isResponseMessageType(type: MessageType): boolean {
  return RESPONSE_TYPES.has(type);
}

/** The response kind of a (pre-)vote request. */
export function voteResponseType(type: MessageType): MessageType {
  if (type === MessageType.Vote) return MessageType.VoteResp;
  if (type === MessageType.PreVote) return MessageType.PreVoteResp;
  throw new TypeError(`not a vote message: ${messageTypeName(type)}`);
}

/**
 * One flat message shape for every kind (as etcd's raftpb.Message), so that every message has the
 * same fields and traces compare side by side with etcd's. Fields a kind does not use hold their
 * zero value. On MsgApp, `index`/`logTerm` name the entry preceding `entries`; on a rejecting
 * MsgAppResp, `rejectHint`/`logTerm` carry the follower's hint.
 */
export interface Message {
  readonly type: MessageType;
  readonly to: NodeId;
  readonly from: NodeId;
  readonly term: Term;
  readonly logTerm: Term;
  readonly index: Index;
  readonly entries: readonly Entry[];
  readonly commit: Index;
  readonly snapshot: Snapshot | undefined;
  readonly reject: boolean;
  readonly rejectHint: Index;
  readonly context: Uint8Array;
}

const NO_ENTRIES: readonly Entry[] = Object.freeze([]);

/** Fields of a message other than its kind; every one defaults to its zero value. */
export type MessageFields = Partial<Omit<Message, 'type'>>;

/** Builds a message with every field present (one object shape for all kinds). */
export function message(type: MessageType, fields: MessageFields = {}): Message {
  return {
    type,
    to: fields.to ?? NO_NODE,
    from: fields.from ?? NO_NODE,
    term: fields.term ?? 0,
    logTerm: fields.logTerm ?? 0,
    index: fields.index ?? 0,
    entries: fields.entries ?? NO_ENTRIES,
    commit: fields.commit ?? 0,
    snapshot: fields.snapshot,
    reject: fields.reject ?? false,
    rejectHint: fields.rejectHint ?? 0,
    context: fields.context ?? EMPTY_BYTES,
  };
}

/** A copy of `m` with some fields replaced. */
export function withFields(m: Message, fields: MessageFields): Message {
  return { ...m, ...fields };
}
