import type { Rng } from '@ward/shared/clock';
import { RaftConfigError } from './errors';
import type { NodeId } from './ids';
import { isNodeId } from './ids';
import type { RaftMutation } from './mutations';
import { isRaftMutation } from './mutations';
import type { ReadOnlyOption } from './read-only';
import type { Storage } from './storage';
import type { Index } from './types';

/**
 * Options of a raft node (etcd's raft.Config; its names in brackets). Everything but `id`,
 * `storage` and `rng` has a default; the whole object is validated by `new RawNode` before
 * anything else happens, and a bad value throws a {@link RaftConfigError} naming the field.
 */
export interface RaftConfig {
  /** This node's id, non-zero [ID]. */
  readonly id: NodeId;
  /** The log as persisted, read synchronously [Storage]. */
  readonly storage: Storage;
  /** Seeded randomness; used only for the randomized election timeout. */
  readonly rng: Rng;
  /** Ticks without hearing from a leader before campaigning; randomized to [n, 2n) [ElectionTick]. Default 10. */
  readonly electionTimeoutTicks?: number;
  /** Ticks between a leader's heartbeats [HeartbeatTick]. Default 1. */
  readonly heartbeatIntervalTicks?: number;
  /** Last index already applied by the application at restart [Applied]. Default 0. */
  readonly applied?: Index;
  /** Byte budget of entries per MsgApp; 0 sends one entry per message [MaxSizePerMsg]. Default 1 MiB. */
  readonly maxMessageBytes?: number;
  /** Byte budget of committed entries handed out per Ready [MaxCommittedSizePerReady]. Default 1 MiB. */
  readonly maxCommittedBytesPerReady?: number;
  /** MsgApps in flight to one follower in replicate state [MaxInflightMsgs]. Default 256. */
  readonly maxInflightMessages?: number;
  /** Entry bytes in flight to one follower; 0 = bounded by messages only [MaxInflightBytes]. Default 0. */
  readonly maxInflightBytes?: number;
  /** Uncommitted payload bytes a leader accepts before dropping proposals [MaxUncommittedEntriesSize]. Default 1 GiB. */
  readonly maxUncommittedEntriesBytes?: number;
  /** Largest accepted proposal (entry data); larger ones are dropped with reason 'entry-too-large'. Default 8 MiB. */
  readonly maxProposalBytes?: number;
  /** Leader steps down when it has not heard from a quorum for an election timeout [CheckQuorum]. Default true. */
  readonly checkQuorum?: boolean;
  /** Pre-election round before bumping the term (thesis §9.6) [PreVote]. Default true. */
  readonly preVote?: boolean;
  /** 'safe' (heartbeat round per ReadIndex) or 'lease-based' (requires checkQuorum) [ReadOnlyOption]. Default 'safe'. */
  readonly readOnlyOption?: ReadOnlyOption;
  /** Followers drop proposals instead of forwarding them to the leader [DisableProposalForwarding]. Default false. */
  readonly disableProposalForwarding?: boolean;
  /** Test-only: deliberate bugs for the simulator's self-test. Never set outside tests. */
  readonly testOnlyMutations?: readonly RaftMutation[];
}

/** A validated configuration with every default filled in. */
export interface ResolvedRaftConfig {
  readonly id: NodeId;
  readonly storage: Storage;
  readonly rng: Rng;
  readonly electionTimeoutTicks: number;
  readonly heartbeatIntervalTicks: number;
  readonly applied: Index;
  readonly maxMessageBytes: number;
  readonly maxCommittedBytesPerReady: number;
  readonly maxInflightMessages: number;
  readonly maxInflightBytes: number;
  readonly maxUncommittedEntriesBytes: number;
  readonly maxProposalBytes: number;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  readonly readOnlyOption: ReadOnlyOption;
  readonly disableProposalForwarding: boolean;
  readonly mutations: ReadonlySet<RaftMutation>;
}

const MIB = 1024 * 1024;
/** Upper bounds that keep every option within sane, safe-integer territory. */
export const RAFT_CONFIG_LIMITS = {
  maxTicks: 1_000_000,
  maxBytes: 2 ** 40,
  maxInflightMessages: 1_000_000,
} as const;

function integerIn(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new RaftConfigError(field, `must be an integer, got ${String(value)}`);
  if (value < min || value > max) throw new RaftConfigError(field, `must be in [${min}, ${max}], got ${value}`);
  return value;
}

function booleanOr(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new RaftConfigError(field, `must be a boolean, got ${String(value)}`);
  return value;
}

function checkDependencies(config: RaftConfig): void {
  if (!isNodeId(config.id)) throw new RaftConfigError('id', 'must be a bigint in [1, 2^64 - 1] (0 is reserved for "none")');
  const storage = config.storage as Partial<Storage> | undefined;
  if (storage === undefined || typeof storage.initialState !== 'function' || typeof storage.entries !== 'function') {
    throw new RaftConfigError('storage', 'is required and must implement Storage');
  }
  const rng = config.rng as Partial<Rng> | undefined;
  if (rng === undefined || typeof rng.nextInt !== 'function') throw new RaftConfigError('rng', 'is required (a seeded Rng)');
}

/** Checks every option and fills in defaults. Throws RaftConfigError on the first bad field. */
export function resolveRaftConfig(config: RaftConfig): ResolvedRaftConfig {
  if (typeof config !== 'object' || config === null) throw new RaftConfigError('config', 'must be an object');
  checkDependencies(config);
  const { maxTicks, maxBytes } = RAFT_CONFIG_LIMITS;
  const heartbeatIntervalTicks = integerIn('heartbeatIntervalTicks', config.heartbeatIntervalTicks ?? 1, 1, maxTicks);
  const electionTimeoutTicks = integerIn('electionTimeoutTicks', config.electionTimeoutTicks ?? 10, 1, maxTicks);
  if (electionTimeoutTicks <= heartbeatIntervalTicks) {
    throw new RaftConfigError('electionTimeoutTicks', `must be greater than heartbeatIntervalTicks (${heartbeatIntervalTicks}), got ${electionTimeoutTicks}`);
  }
  const maxMessageBytes = integerIn('maxMessageBytes', config.maxMessageBytes ?? MIB, 0, maxBytes);
  const maxCommittedBytesPerReady = integerIn('maxCommittedBytesPerReady', config.maxCommittedBytesPerReady ?? Math.max(MIB, maxMessageBytes), 1, maxBytes);
  const maxInflightMessages = integerIn('maxInflightMessages', config.maxInflightMessages ?? 256, 1, RAFT_CONFIG_LIMITS.maxInflightMessages);
  const maxInflightBytes = integerIn('maxInflightBytes', config.maxInflightBytes ?? 0, 0, maxBytes);
  if (maxInflightBytes !== 0 && maxInflightBytes < maxMessageBytes) {
    throw new RaftConfigError('maxInflightBytes', `must be 0 (no limit) or >= maxMessageBytes (${maxMessageBytes}), got ${maxInflightBytes}`);
  }
  const maxUncommittedEntriesBytes = integerIn('maxUncommittedEntriesBytes', config.maxUncommittedEntriesBytes ?? 1024 * MIB, 1, maxBytes);
  const maxProposalBytes = integerIn('maxProposalBytes', config.maxProposalBytes ?? 8 * MIB, 1, maxBytes);
  const checkQuorum = booleanOr('checkQuorum', config.checkQuorum, true);
  const readOnlyOption = config.readOnlyOption ?? 'safe';
  if (readOnlyOption !== 'safe' && readOnlyOption !== 'lease-based') throw new RaftConfigError('readOnlyOption', `must be 'safe' or 'lease-based', got ${String(readOnlyOption)}`);
  if (readOnlyOption === 'lease-based' && !checkQuorum) throw new RaftConfigError('readOnlyOption', "'lease-based' requires checkQuorum: true");
  const mutations = config.testOnlyMutations ?? [];
  if (!Array.isArray(mutations) || !mutations.every(isRaftMutation)) throw new RaftConfigError('testOnlyMutations', 'must list known mutations');
  return {
    id: config.id,
    storage: config.storage,
    rng: config.rng,
    electionTimeoutTicks,
    heartbeatIntervalTicks,
    applied: integerIn('applied', config.applied ?? 0, 0, Number.MAX_SAFE_INTEGER),
    maxMessageBytes,
    maxCommittedBytesPerReady,
    maxInflightMessages,
    maxInflightBytes,
    maxUncommittedEntriesBytes,
    maxProposalBytes,
    checkQuorum,
    preVote: booleanOr('preVote', config.preVote, true),
    readOnlyOption,
    disableProposalForwarding: booleanOr('disableProposalForwarding', config.disableProposalForwarding, false),
    mutations: new Set(mutations),
  };
}
