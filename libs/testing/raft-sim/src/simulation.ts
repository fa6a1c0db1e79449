import type { Rng } from '@ward/shared/clock';
import type { Message, NodeId } from '@ward/raft/core';
import { MessageType, Role, decodeMessage, encodeMessage } from '@ward/raft/core';
import { EventQueue } from './event-queue';
import type { HistoryChecker, HistoryVerdict, SimOperation } from './history';
import { SafetyChecker } from './invariants';
import type { KvApplyResult, KvCommand } from './kv-state-machine';
import type { SimProfile } from './profile';
import { rngFor } from './seeds';
import type { SimHost } from './sim-node';
import { SimNode, clusterConfState } from './sim-node';
import { SimNetwork } from './sim-network';
import { TraceHash } from './trace-hash';
import type { Violation } from './violations';
import type { WorkloadHost } from './workload';
import { Workload } from './workload';
import { MembershipOperator } from './operator';

type SimEvent =
  | { readonly time: number; readonly seq: number; readonly kind: 'deliver'; readonly to: NodeId; readonly message: Message | Uint8Array }
  | { readonly time: number; readonly seq: number; readonly kind: 'disk'; readonly node: SimNode; readonly incarnation: number }
  | { readonly time: number; readonly seq: number; readonly kind: 'snap-status' | 'unreachable'; readonly from: NodeId; readonly to: NodeId; readonly ok: boolean };

/** Counters of one run. */
export interface SimStats {
  messagesSent: number;
  messagesDelivered: number;
  messagesLost: number;
  crashes: number;
  partitions: number;
  clogs: number;
  leaderTransfers: number;
  snapshotsInstalled: number;
  leaderTerms: number;
  finalCommitIndex: number;
  opsCompleted: number;
  opsUnknown: number;
  opsRefused: number;
  /** Unknown-outcome writes recorded as failed because they never took effect anywhere. */
  unknownResolved: number;
  /** Ticks from the heal to a leader every live node follows (undefined: none in budget). */
  leaderAfterHealTicks: number | undefined;
  /** Ticks from the heal to full convergence (undefined: not within budget). */
  convergedAfterHealTicks: number | undefined;
  /** Membership changes the operator proposed, saw applied, raced (proposed while one was waiting). */
  confChangesProposed: number;
  confChangesApplied: number;
  confChangesRaced: number;
  /** Changes that went through a joint configuration, that removed or demoted the leader, that demoted a voter. */
  jointConfChanges: number;
  leaderRemovals: number;
  demotions: number;
  /** Times the cluster grew from the fewest to the most voters and shrank back (3 -> 5 -> 3). */
  growShrinkCycles: number;
}

/** Everything a run produced. */
export interface SimResult {
  readonly seed: number;
  readonly profile: string;
  readonly traceHash: string;
  readonly violations: readonly Violation[];
  readonly stats: SimStats;
  readonly history: readonly SimOperation[];
  /** The linearizability verdict of the history ('ok' required; 'unknown' is not a pass). */
  readonly linearizability: HistoryVerdict | 'not-checked';
}

/** Options of {@link runSimulation}. */
export interface RunOptions {
  /** Checks the client history (tests pass @ward/testing/linearizability); unchecked without it. */
  readonly checkHistory?: HistoryChecker;
  /**
   * Stop the fault phase at the first safety violation (mutation hunting); a run stopped this
   * way skips the liveness phase and the linearizability check.
   */
  readonly stopAtFirstViolation?: boolean;
  /**
   * Leave stale reads to the linearizability checker alone (turns off the simulator's own
   * read-freshness check), to show that the checker catches them by itself.
   */
  readonly linearizabilityOnlyForReads?: boolean;
}

/**
 * One deterministic run: `profile.nodes` SimNodes, a SimNetwork, crashes and restarts, clients;
 * a fault phase of `profile.ticks` ticks with safety checked after every event, then a liveness
 * phase (faults off, everyone restarted) and a linearizability check of the client history.
 */
export class Simulation implements SimHost, WorkloadHost {
  readonly checker: SafetyChecker;
  readonly trace = new TraceHash();
  private readonly queue = new EventQueue<SimEvent>();
  private readonly network: SimNetwork;
  private readonly workload: Workload;
  private readonly simNodes: SimNode[] = [];
  private readonly byId = new Map<NodeId, SimNode>();
  private readonly faultRng: Rng;
  private clock = 0;
  private seq = 0;
  private historyClock = 0;
  private options: RunOptions = {};
  private crashesEnabled = true;
  readonly stats: SimStats = {
    messagesSent: 0,
    messagesDelivered: 0,
    messagesLost: 0,
    crashes: 0,
    partitions: 0,
    clogs: 0,
    leaderTransfers: 0,
    snapshotsInstalled: 0,
    leaderTerms: 0,
    finalCommitIndex: 0,
    opsCompleted: 0,
    opsUnknown: 0,
    opsRefused: 0,
    unknownResolved: 0,
    leaderAfterHealTicks: undefined,
    convergedAfterHealTicks: undefined,
    confChangesProposed: 0,
    confChangesApplied: 0,
    confChangesRaced: 0,
    jointConfChanges: 0,
    leaderRemovals: 0,
    demotions: 0,
    growShrinkCycles: 0,
  };
  private readonly operator: MembershipOperator | undefined;

  constructor(
    readonly seed: number,
    readonly profile: SimProfile,
  ) {
    const conf = clusterConfState(profile.membership?.initialVoters ?? profile.nodes);
    this.checker = new SafetyChecker(conf);
    const ids = Array.from({ length: profile.nodes }, (_, i) => BigInt(i + 1));
    this.network = new SimNetwork(profile.network, rngFor(seed, 'network'), ids);
    this.faultRng = rngFor(seed, 'faults');
    for (const id of ids) {
      const node = new SimNode(id, this, conf);
      this.simNodes.push(node);
      this.byId.set(id, node);
    }
    this.workload = new Workload(profile.workload, rngFor(seed, 'workload'), this);
    if (profile.membership !== undefined) this.operator = new MembershipOperator(profile.membership, rngFor(seed, 'membership'), this);
  }

  /** The live leader of the highest term, if any (the operator sends its changes there). */
  leader(): SimNode | undefined {
    let best: SimNode | undefined;
    let bestTerm = -1;
    for (const n of this.simNodes) {
      if (!n.up || n.node === undefined || n.role !== Role.Leader) continue;
      const term = n.node.basicStatus().term;
      if (term > bestTerm) {
        best = n;
        bestTerm = term;
      }
    }
    return best;
  }

  now(): number {
    return this.clock;
  }

  stamp(): number {
    return ++this.historyClock;
  }

  nodes(): readonly SimNode[] {
    return this.simNodes;
  }

  send(from: SimNode, m: Message): void {
    this.checker.onSend(from.id, m);
    this.stats.messagesSent++;
    const every = this.profile.network.encodeEveryNthMessage;
    const payload = every > 0 && this.stats.messagesSent % every === 0 ? encodeMessage(m) : m;
    let delivered = false;
    const fate = this.network.send(this.clock, m, (time) => {
      delivered = true;
      this.queue.push({ time, seq: this.seq++, kind: 'deliver', to: m.to, message: payload });
    });
    if (!delivered) this.stats.messagesLost++;
    if (fate === 'partitioned') this.queue.push({ time: this.clock, seq: this.seq++, kind: 'unreachable', from: m.from, to: m.to, ok: false });
    if (m.type === MessageType.Snap) {
      // The transport reports how the snapshot stream ended.
      this.queue.push({ time: this.clock + this.profile.network.maxDelayTicks, seq: this.seq++, kind: 'snap-status', from: m.from, to: m.to, ok: delivered });
    }
  }

  scheduleDisk(node: SimNode, incarnation: number, ticks: number): void {
    this.queue.push({ time: this.clock + ticks, seq: this.seq++, kind: 'disk', node, incarnation });
  }

  onWriteApplied(node: SimNode, cmd: KvCommand, result: KvApplyResult, index: number): void {
    this.workload.onWriteApplied(node, cmd, result, index);
  }

  onReadReady(node: SimNode, context: string, readIndex: number): void {
    this.workload.onReadReady(node, context, readIndex);
  }

  onSnapshotInstalled(): void {
    this.stats.snapshotsInstalled++;
  }

  onStaleRead(detail: string): void {
    if (this.options.linearizabilityOnlyForReads !== true) this.checker.fail('stale-read', detail);
  }

  onCoreError(node: SimNode, error: unknown): void {
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.checker.fail('core-error', `node ${node.id}: ${text}`);
  }

  private runEvent(e: SimEvent): void {
    if (e.kind === 'disk') {
      e.node.onDiskDone(e.incarnation);
      this.afterEvent(e.node);
      return;
    }
    if (e.kind === 'deliver') {
      const node = this.byId.get(e.to)!;
      if (!node.up) return;
      const m = e.message instanceof Uint8Array ? decodeMessage(e.message) : e.message;
      this.stats.messagesDelivered++;
      this.trace.add(m.type);
      this.trace.add(Number(m.from));
      this.trace.add(Number(m.to));
      this.trace.add(m.term);
      this.trace.add(m.index);
      this.trace.add(m.entries.length);
      node.deliver(m);
      this.afterEvent(node);
      return;
    }
    const sender = this.byId.get(e.from)!;
    if (e.kind === 'snap-status') sender.reportSnapshot(e.to, e.ok);
    else sender.reportUnreachable(e.to);
    this.afterEvent(sender);
  }

  private afterEvent(node: SimNode): void {
    this.checker.observe(node);
    this.checker.checkDurability(this.simNodes);
  }

  private drainEvents(): void {
    for (let e = this.queue.peek(); e !== undefined && e.time <= this.clock; e = this.queue.peek()) {
      this.queue.pop();
      this.runEvent(e);
    }
  }

  private injectFaults(): void {
    const change = this.network.step(this.clock);
    if (change !== undefined) {
      this.trace.addString(change);
      if (change === 'clog') this.stats.clogs++;
      else if (change !== 'healed') this.stats.partitions++;
    }
    if (this.crashesEnabled && this.faultRng.nextFloat() < this.profile.leaderTransferProbability) this.requestTransfer();
    const c = this.profile.crashes;
    for (const node of this.simNodes) {
      if (node.up) {
        const p = node.role === Role.Leader ? c.probability + c.leaderProbability : c.probability;
        if (!this.crashesEnabled || this.clock - node.upSince < c.minUpTicks || this.faultRng.nextFloat() >= p) continue;
        node.crash(this.clock, c.minDownTicks + this.faultRng.nextInt(c.maxDownTicks - c.minDownTicks + 1));
        this.stats.crashes++;
        this.trace.add(1000 + Number(node.id));
        this.workload.onNodeCrashed(node);
        this.checker.checkDurability(this.simNodes);
      } else if (node.downUntil <= this.clock) {
        node.restart(this.clock);
        this.trace.add(2000 + Number(node.id));
        this.afterEvent(node);
      }
    }
  }

  private requestTransfer(): void {
    const leader = this.simNodes.find((n) => n.up && n.role === Role.Leader);
    if (leader === undefined) return;
    const voters = this.operator === undefined ? undefined : leader.node!.confState().voters;
    const others = this.simNodes.filter((n) => n !== leader && (voters === undefined || voters.includes(n.id)));
    if (others.length === 0) return;
    const target = others[this.faultRng.nextInt(others.length)]!;
    this.stats.leaderTransfers++;
    this.trace.add(3000 + Number(target.id));
    leader.transferLeader(target.id);
    this.afterEvent(leader);
  }

  /** One tick: faults, due events, every node's tick, clients. */
  private step(): void {
    this.checker.tick = this.clock;
    this.injectFaults();
    this.drainEvents();
    for (const node of this.simNodes) {
      node.tick();
      this.checker.observe(node);
    }
    this.drainEvents();
    this.workload.step(this.clock);
    this.drainEvents();
    if (this.operator !== undefined) {
      this.operator.step();
      this.drainEvents();
    }
    this.clock++;
  }

  private hasSafetyViolation(): boolean {
    return this.checker.violations.length > 0;
  }

  /** Runs the fault phase, then the liveness phase, then the linearizability check. */
  run(options: RunOptions = {}): SimResult {
    this.options = options;
    for (let t = 0; t < this.profile.ticks; t++) {
      this.step();
      if (options.stopAtFirstViolation === true && this.hasSafetyViolation()) break;
    }
    if (!(options.stopAtFirstViolation === true && this.hasSafetyViolation())) this.runLivenessPhase();
    return this.finish(options);
  }

  private stableLeader(): SimNode | undefined {
    const leaders = this.simNodes.filter((n) => n.up && n.role === Role.Leader);
    if (leaders.length !== 1) return undefined;
    const leader = leaders[0]!;
    const term = leader.node!.basicStatus().term;
    const followed = this.members(leader).every((n) => n.up && n.node!.basicStatus().lead === leader.id && n.node!.basicStatus().term === term);
    return followed ? leader : undefined;
  }

  /** The nodes in the leader's configuration (every node without membership changes). */
  private members(leader: SimNode): readonly SimNode[] {
    if (this.operator === undefined) return this.simNodes;
    const cs = leader.node!.confState();
    const ids = new Set([...cs.voters, ...cs.votersOutgoing, ...cs.learners, ...cs.learnersNext]);
    return this.simNodes.filter((n) => ids.has(n.id));
  }

  private converged(leader: SimNode): boolean {
    const status = leader.node!.basicStatus();
    if (leader.node!.termAt(status.commit) !== status.term) return false;
    if (this.workload.pendingCount() > 0) return false;
    const hash = leader.kv.stateHash();
    return this.members(leader).every((n) => n.up && n.appliedIndex === status.commit && n.kv.stateHash() === hash);
  }

  private runLivenessPhase(): void {
    const { leaderWithinTicks, convergeWithinTicks } = this.profile.liveness;
    this.network.disableFaults();
    this.crashesEnabled = false;
    for (const node of this.simNodes) node.slowDisksEnabled = false;
    for (const node of this.simNodes) if (!node.up && node.downUntil !== Number.POSITIVE_INFINITY) node.restart(this.clock);
    this.workload.stop();
    this.operator?.stop();
    const healedAt = this.clock;
    for (let t = 0; t < leaderWithinTicks + convergeWithinTicks; t++) {
      this.step();
      const leader = this.stableLeader();
      if (leader === undefined) continue;
      this.stats.leaderAfterHealTicks ??= this.clock - healedAt;
      if (this.converged(leader)) {
        this.stats.convergedAfterHealTicks = this.clock - healedAt;
        return;
      }
    }
    if (this.stats.leaderAfterHealTicks === undefined || this.stats.leaderAfterHealTicks > leaderWithinTicks) {
      this.checker.fail('liveness-no-leader', `no stable leader within ${leaderWithinTicks} ticks of healing`);
    } else {
      this.checker.fail('liveness-no-convergence', `nodes did not converge within ${convergeWithinTicks} ticks of healing`);
    }
  }

  private finish(options: RunOptions): SimResult {
    const history = this.workload.history;
    let verdict: SimResult['linearizability'] = 'not-checked';
    const stopped = options.stopAtFirstViolation === true && this.hasSafetyViolation();
    // Only a converged run may resolve unknown writes from what the simulator saw applied.
    if (this.stats.convergedAfterHealTicks !== undefined) this.stats.unknownResolved = this.workload.resolveNeverApplied();
    if (options.checkHistory !== undefined && !stopped) {
      const result = options.checkHistory(history);
      verdict = result.verdict;
      if (result.verdict === 'illegal') this.checker.fail('not-linearizable', `history of ${history.length} operations is not linearizable: ${result.detail ?? ''}`);
    }
    Object.assign(this.stats, {
      leaderTerms: this.checker.leaderTerms(),
      finalCommitIndex: this.checker.committedIndex,
      opsCompleted: this.workload.completed,
      opsUnknown: this.workload.unknown,
      opsRefused: this.workload.refused,
    });
    if (this.operator !== undefined) {
      const o = this.operator.stats;
      Object.assign(this.stats, { confChangesProposed: o.proposed, confChangesApplied: o.applied, confChangesRaced: o.raced, jointConfChanges: o.joint, leaderRemovals: o.leaderRemovals, demotions: o.demotions, growShrinkCycles: o.growShrinkCycles });
    }
    return { seed: this.seed, profile: this.profile.name, traceHash: this.trace.hex(), violations: this.checker.violations, stats: this.stats, history, linearizability: verdict };
  }
}

/** Runs one seed of a profile. */
export function runSimulation(seed: number, profile: SimProfile, options: RunOptions = {}): SimResult {
  return new Simulation(seed, profile).run(options);
}
