import type { Rng } from '@ward/shared/clock';
import { utf8 } from '@ward/shared/bytes';
import type { NodeId } from '@ward/raft/core';
import type { SimKvInput as KvInput, SimKvOutput as KvOutput, SimOperation } from './history';
import type { CasCompare, KvApplyResult, KvCommand } from './kv-state-machine';
import { encodeCommand } from './kv-state-machine';
import type { SimProfile } from './profile';
import type { SimNode } from './sim-node';

/** An operation a client is waiting on. */
interface PendingOp {
  readonly client: number;
  readonly seq: number;
  readonly input: KvInput;
  readonly node: NodeId;
  readonly issuedAt: number;
  readonly callTime: number;
  /** For reads: the highest log index of a write acknowledged before this read was called. */
  readonly mustSeeIndex: number;
}

/** What the workload needs from the simulation. */
export interface WorkloadHost {
  now(): number;
  /** A strictly increasing timestamp for history events (real-time order of the run). */
  stamp(): number;
  nodes(): readonly SimNode[];
  onStaleRead(detail: string): void;
}

/**
 * Clients of the KV state machine: each issues one operation at a time (get via ReadIndex, put
 * and CAS via the log) to a live node, records call and return in a history for the
 * linearizability checker, and gives up after a timeout (outcome unknown).
 */
export class Workload {
  readonly history: SimOperation[] = [];
  /** History position of each unknown-outcome operation, with its sequence number. */
  private readonly unknownSeqs = new Map<number, number>();
  private readonly pending = new Map<number, PendingOp>();
  private readonly nextOpAt: number[];
  private readonly seqs: number[];
  private maxAckedWriteIndex = 0;
  /** Writes that took effect somewhere (client * 2^32 + seq). */
  private readonly effective = new Set<number>();
  private enabled = true;
  completed = 0;
  unknown = 0;
  refused = 0;

  constructor(
    private readonly config: SimProfile['workload'],
    private readonly rng: Rng,
    private readonly host: WorkloadHost,
  ) {
    this.nextOpAt = Array.from({ length: config.clients }, () => 0);
    this.seqs = Array.from({ length: config.clients }, () => 0);
  }

  /** Stops issuing new operations (the liveness phase drains what is pending). */
  stop(): void {
    this.enabled = false;
  }

  pendingCount(): number {
    return this.pending.size;
  }

  step(now: number): void {
    for (const op of [...this.pending.values()]) if (now - op.issuedAt >= this.config.opTimeoutTicks) this.giveUp(op);
    if (!this.enabled) return;
    for (let client = 0; client < this.config.clients; client++) {
      if (this.pending.has(client) || this.nextOpAt[client]! > now) continue;
      this.issue(client, now);
    }
  }

  private pickNode(): SimNode | undefined {
    // Clients talk to the cluster's members (spare and removed machines serve nobody).
    const live = this.host.nodes().filter((n) => n.up && n.isMember());
    if (live.length === 0) return undefined;
    const first = live[this.rng.nextInt(live.length)]!;
    // Like an etcd client: usually follow the node's hint about who leads.
    const lead = first.node?.leader() ?? 0n;
    const leader = live.find((n) => n.id === lead);
    return leader !== undefined && this.rng.nextFloat() < 0.8 ? leader : first;
  }

  private pickInput(client: number, seq: number): KvInput {
    const key = `k${this.rng.nextInt(this.config.keys)}`;
    const r = this.rng.nextFloat();
    if (r < this.config.readRatio) return { kind: 'get', key };
    const value = `c${client}-${seq}`;
    if (r < this.config.readRatio + this.config.casRatio) {
      const byVersion = this.rng.nextFloat() < 0.5;
      const compare = byVersion ? { version: this.rng.nextInt(4) } : { value: this.rng.nextFloat() < 0.2 ? null : `c${this.rng.nextInt(this.config.clients)}-${this.rng.nextInt(seq + 1)}` };
      return { kind: 'cas', key, compare, value };
    }
    return { kind: 'put', key, value };
  }

  private issue(client: number, now: number): void {
    const node = this.pickNode();
    if (node === undefined) return;
    const seq = ++this.seqs[client]!;
    const input = this.pickInput(client, seq);
    const op: PendingOp = { client, seq, input, node: node.id, issuedAt: now, callTime: this.host.stamp(), mustSeeIndex: this.maxAckedWriteIndex };
    let accepted: boolean;
    if (input.kind === 'get') {
      accepted = node.readIndex(utf8(`${client}:${seq}`));
    } else {
      const cmd: KvCommand =
        input.kind === 'put'
          ? { client, seq, op: 'put', key: input.key, value: input.value }
          : { client, seq, op: 'cas', key: input.key, compare: (input as { compare: CasCompare }).compare, value: (input as { value: string }).value };
      accepted = node.propose(encodeCommand(cmd));
    }
    if (!accepted) {
      // Refused before anything was appended: definitely no effect.
      this.history.push({ clientId: client, input, callTime: op.callTime, status: 'failed', returnTime: this.host.stamp() });
      this.refused++;
      this.finish(client, now);
      return;
    }
    this.pending.set(client, op);
  }

  private finish(client: number, now: number): void {
    this.pending.delete(client);
    this.nextOpAt[client] = now + 1 + this.rng.nextInt(this.config.maxThinkTicks + 1);
  }

  private giveUp(op: PendingOp): void {
    this.history.push({ clientId: op.client, input: op.input, callTime: op.callTime, status: 'unknown', returnTime: this.host.stamp() });
    this.unknownSeqs.set(this.history.length - 1, op.seq);
    this.unknown++;
    this.finish(op.client, this.host.now());
  }

  /** A node applied a client's write: the client that sent it there gets the answer. */
  onWriteApplied(node: SimNode, cmd: KvCommand, result: KvApplyResult, index: number): void {
    this.effective.add(cmd.client * 0x1_0000_0000 + cmd.seq);
    const op = this.pending.get(cmd.client);
    if (op === undefined || op.seq !== cmd.seq || op.node !== node.id) return;
    const output: KvOutput = result.kind === 'put' ? { kind: 'put' } : { kind: 'cas', succeeded: result.succeeded };
    this.complete(op, output);
    if (index > this.maxAckedWriteIndex) this.maxAckedWriteIndex = index;
  }

  /** A read's index is applied on `node`: answer it from that node's state machine. */
  onReadReady(node: SimNode, context: string, readIndex: number): void {
    const [client, seq] = context.split(':').map(Number) as [number, number];
    const op = this.pending.get(client);
    if (op === undefined || op.seq !== seq || op.node !== node.id || op.input.kind !== 'get') return;
    if (readIndex < op.mustSeeIndex) {
      this.host.onStaleRead(`read ${client}:${seq} on node ${node.id} got index ${readIndex}, but a write at ${op.mustSeeIndex} was acknowledged before the read began`);
    }
    const current = node.kv.get(op.input.key);
    this.complete(op, { kind: 'get', value: current.value, version: current.version });
  }

  private complete(op: PendingOp, output: KvOutput): void {
    this.history.push({ clientId: op.client, input: op.input, callTime: op.callTime, status: 'ok', output, returnTime: this.host.stamp() });
    this.completed++;
    this.finish(op.client, this.host.now());
  }

  /**
   * Oracle resolution, for a run that converged: an unknown-outcome write that never took effect
   * on any node cannot have taken effect at all (every committed entry was applied everywhere),
   * so it is recorded as failed. Unknown writes that did take effect stay open-ended. Returns how
   * many were resolved.
   */
  resolveNeverApplied(): number {
    let resolved = 0;
    for (const [position, seq] of this.unknownSeqs) {
      const op = this.history[position]!;
      if (op.status !== 'unknown' || op.input.kind === 'get') continue;
      if (this.effective.has(op.clientId * 0x1_0000_0000 + seq)) continue;
      this.history[position] = { clientId: op.clientId, input: op.input, callTime: op.callTime, status: 'failed', returnTime: op.returnTime };
      resolved++;
    }
    return resolved;
  }

  /** A node crashed: its clients' writes become unknown, reads are abandoned. */
  onNodeCrashed(node: SimNode): void {
    for (const op of [...this.pending.values()]) if (op.node === node.id) this.giveUp(op);
  }
}
