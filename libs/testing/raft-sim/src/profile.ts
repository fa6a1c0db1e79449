import type { RaftConfig, RaftMutation } from '@ward/raft/core';
import type { CrashLoss } from './sim-disk';

/** Everything that shapes one simulated run besides its seed. */
export interface SimProfile {
  readonly name: string;
  readonly nodes: number;
  /** Ticks of the fault phase; each node's raft ticks once per tick. */
  readonly ticks: number;
  /** Options for every node (id, storage and rng are the simulator's). */
  readonly raft: Omit<RaftConfig, 'id' | 'storage' | 'rng' | 'testOnlyMutations'>;
  readonly network: {
    readonly dropRate: number;
    readonly duplicateRate: number;
    /** One-way delay, uniform in [min, max] ticks: unequal delays reorder messages. */
    readonly minDelayTicks: number;
    readonly maxDelayTicks: number;
    /** Round-trip every n-th message through the binary codec (1 = all, 0 = none). */
    readonly encodeEveryNthMessage: number;
    /**
     * Clogs: all links out of one node stall for a while; what is sent meanwhile arrives after
     * the clog ends (late, stale messages from an old term, as after a long GC pause).
     */
    readonly clogs: {
      /** Per tick: chance that a clog starts. */
      readonly probability: number;
      readonly minTicks: number;
      readonly maxTicks: number;
    };
    readonly partitions: {
      /** Per tick, while healed and stable: chance that a partition starts. */
      readonly startProbability: number;
      /** Per tick, while partitioned and stable: chance that it heals. */
      readonly healProbability: number;
      /** Neither state changes before it lasted this long. */
      readonly minStableTicks: number;
    };
  };
  /** Per tick: chance that the leader is asked to hand leadership to a random other node. */
  readonly leaderTransferProbability: number;
  readonly crashes: {
    /** Per tick per live node. */
    readonly probability: number;
    /** Per tick for a node that leads (on top of `probability`): kills leaders mid-replication. */
    readonly leaderProbability: number;
    readonly minUpTicks: number;
    readonly minDownTicks: number;
    readonly maxDownTicks: number;
    readonly loss: CrashLoss;
  };
  readonly disk: {
    /** fsync latency in ticks, uniform in [min, max]; 0 completes at once. */
    readonly minSyncTicks: number;
    readonly maxSyncTicks: number;
    /** Chance that one fsync is slow, and how slow. */
    readonly slowProbability: number;
    readonly slowSyncTicks: number;
  };
  readonly workload: {
    readonly clients: number;
    readonly keys: number;
    /** Share of reads (ReadIndex) among operations; the rest are puts and CASes. */
    readonly readRatio: number;
    readonly casRatio: number;
    /** A client gives up on an operation after this many ticks (outcome unknown). */
    readonly opTimeoutTicks: number;
    /** Pause between a client's operations, uniform in [0, max]. */
    readonly maxThinkTicks: number;
  };
  readonly snapshots: {
    /** An application snapshot every this many applied entries. */
    readonly everyEntries: number;
    /** Entries kept behind a snapshot for slow followers. */
    readonly catchUpEntries: number;
  };
  readonly liveness: {
    /** After healing: a stable leader within this many ticks. */
    readonly leaderWithinTicks: number;
    /** After healing: every node applied everything, states equal, within this many ticks. */
    readonly convergeWithinTicks: number;
  };
  /** Deliberate core bugs (the harness self-test); none in real runs. */
  readonly mutations: readonly RaftMutation[];
  /**
   * Membership changes by an operator (undefined: the `nodes` machines are a fixed cluster). The
   * cluster starts with voters 1..initialVoters; the other machines are spares that join when
   * added. Ids are never reused: a removed machine stays out.
   */
  readonly membership?: {
    readonly initialVoters: number;
    /** Voters kept within [minVoters, maxVoters]. */
    readonly minVoters: number;
    readonly maxVoters: number;
    /** Per tick, while no change of the operator is waiting: chance that the next one starts. */
    readonly changeProbability: number;
    /**
     * Chance that the operator does not wait for its previous change to be applied (a racing
     * second change; the leader must turn it into an empty entry).
     */
    readonly raceProbability: number;
    /** The operator gives up waiting for a change after this many ticks. */
    readonly changeTimeoutTicks: number;
  };
}

const ELECTION_TICKS = 20;

/**
 * The CI chaos profile (spec AC-3): 5 nodes, 20% drops, 5% duplicates, 1-10 tick delays,
 * symmetric and asymmetric partitions, crashes losing un-fsynced writes, slow disks.
 */
export const CHAOS_PROFILE: SimProfile = {
  name: 'chaos',
  nodes: 5,
  ticks: 10_000,
  raft: {
    electionTimeoutTicks: ELECTION_TICKS,
    heartbeatIntervalTicks: 2,
    maxMessageBytes: 4 * 1024,
    maxInflightMessages: 64,
    maxUncommittedEntriesBytes: 64 * 1024,
    preVote: true,
    checkQuorum: true,
    readOnlyOption: 'safe',
  },
  network: {
    dropRate: 0.2,
    duplicateRate: 0.05,
    minDelayTicks: 1,
    maxDelayTicks: 10,
    encodeEveryNthMessage: 4,
    clogs: { probability: 0.002, minTicks: 20, maxTicks: 120 },
    partitions: { startProbability: 0.01, healProbability: 0.01, minStableTicks: 50 },
  },
  leaderTransferProbability: 0.001,
  crashes: { probability: 0.002, leaderProbability: 0, minUpTicks: 50, minDownTicks: 5, maxDownTicks: 200, loss: 'random-prefix' },
  disk: { minSyncTicks: 0, maxSyncTicks: 2, slowProbability: 0.05, slowSyncTicks: 25 },
  workload: { clients: 5, keys: 3, readRatio: 0.4, casRatio: 0.3, opTimeoutTicks: 80, maxThinkTicks: 10 },
  snapshots: { everyEntries: 40, catchUpEntries: 10 },
  liveness: { leaderWithinTicks: 10 * 2 * ELECTION_TICKS, convergeWithinTicks: 2_000 },
  mutations: [],
};

/** No faults at all: a baseline. */
export const CALM_PROFILE: SimProfile = {
  ...CHAOS_PROFILE,
  name: 'calm',
  network: {
    ...CHAOS_PROFILE.network,
    dropRate: 0,
    duplicateRate: 0,
    clogs: { ...CHAOS_PROFILE.network.clogs, probability: 0 },
    partitions: { ...CHAOS_PROFILE.network.partitions, startProbability: 0 },
  },
  crashes: { ...CHAOS_PROFILE.crashes, probability: 0 },
  leaderTransferProbability: 0,
  disk: { ...CHAOS_PROFILE.disk, slowProbability: 0 },
};

/** Message loss only (20%). */
export const LOSSY_PROFILE: SimProfile = {
  ...CALM_PROFILE,
  name: 'lossy',
  network: { ...CALM_PROFILE.network, dropRate: 0.2, duplicateRate: 0.05 },
};

/**
 * Figure 8 of the Raft paper needs leaders that die while catching followers up entry by entry:
 * 3 nodes, 30% drops, one entry per MsgApp, leaders crashing 5% of their ticks (after 5 ticks up,
 * back within 40), no leader transfers.
 */
export const FIGURE8_PROFILE: SimProfile = {
  ...CHAOS_PROFILE,
  name: 'figure8',
  nodes: 3,
  ticks: 5_000,
  raft: { ...CHAOS_PROFILE.raft, maxMessageBytes: 0 },
  network: { ...CHAOS_PROFILE.network, dropRate: 0.3 },
  leaderTransferProbability: 0,
  crashes: { ...CHAOS_PROFILE.crashes, leaderProbability: 0.05, minUpTicks: 5, maxDownTicks: 40 },
};

/**
 * Membership changes under chaos (spec AC-11): 9 machines, a cluster of 3 voters; an operator adds
 * learners, promotes them, removes voters (the leader too), replaces members and grows to 5 and
 * back, one step at a time or through joint configurations, sometimes racing a second change;
 * with the chaos profile's drops, partitions, clogs, crashes and leader transfers.
 */
export const MEMBERSHIP_PROFILE: SimProfile = {
  ...CHAOS_PROFILE,
  name: 'membership',
  nodes: 9,
  ticks: 6_000,
  membership: { initialVoters: 3, minVoters: 3, maxVoters: 5, changeProbability: 0.02, raceProbability: 0.1, changeTimeoutTicks: 300 },
};

/**
 * The membership profile with an impatient operator: a change every 50 ticks or so, and most
 * changes proposed while the previous one still waits (the leader must turn them into empty
 * entries). Where the "two changes in flight" bug is hunted.
 */
export const MEMBERSHIP_CHURN_PROFILE: SimProfile = {
  ...MEMBERSHIP_PROFILE,
  name: 'membership-churn',
  membership: { ...MEMBERSHIP_PROFILE.membership!, changeProbability: 0.1, raceProbability: 0.9 },
};

export const PROFILES: Readonly<Record<string, SimProfile>> = {
  chaos: CHAOS_PROFILE,
  calm: CALM_PROFILE,
  lossy: LOSSY_PROFILE,
  figure8: FIGURE8_PROFILE,
  membership: MEMBERSHIP_PROFILE,
  'membership-churn': MEMBERSHIP_CHURN_PROFILE,
};

/** A profile with some fields replaced (ticks, node count, mutations...). */
export function withOverrides(profile: SimProfile, overrides: Partial<SimProfile>): SimProfile {
  return { ...profile, ...overrides };
}
