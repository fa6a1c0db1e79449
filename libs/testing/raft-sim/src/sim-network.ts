import type { Rng } from '@ward/shared/clock';
import type { Message, NodeId } from '@ward/raft/core';
import type { SimProfile } from './profile';

/** What happened to one sent message. */
export type MessageFate = 'dropped' | 'partitioned' | 'delivered' | 'duplicated';

/** The kinds of partition the network produces. */
export type PartitionKind = 'isolate-one' | 'split' | 'asymmetric-in' | 'asymmetric-out' | 'random-links';

/**
 * The simulated network: per message drop, duplication and delay (so reordering); partitions
 * as sets of cut directed links, started and healed at random with minimum stable windows.
 */
export class SimNetwork {
  private readonly cut = new Set<number>();
  /** Per sending node: the tick until which its outgoing links are clogged. */
  private readonly cloggedUntil = new Map<NodeId, number>();
  private partitioned = false;
  private changedAt = 0;
  private faultsEnabled = true;
  current: PartitionKind | undefined = undefined;

  constructor(
    private readonly config: SimProfile['network'],
    private readonly rng: Rng,
    private readonly ids: readonly NodeId[],
  ) {}

  private static link(from: NodeId, to: NodeId): number {
    return Number(from) * 1024 + Number(to);
  }

  /** True if a message from `from` can reach `to` now. */
  connected(from: NodeId, to: NodeId): boolean {
    return !this.cut.has(SimNetwork.link(from, to));
  }

  /** Advances clogs and the partition state machine; returns the new partition kind when one starts. */
  step(now: number): PartitionKind | 'healed' | 'clog' | undefined {
    if (!this.faultsEnabled) return undefined;
    const clogs = this.config.clogs;
    if (clogs.probability > 0 && this.rng.nextFloat() < clogs.probability) {
      const node = this.pickNode();
      this.cloggedUntil.set(node, now + clogs.minTicks + this.rng.nextInt(clogs.maxTicks - clogs.minTicks + 1));
      return 'clog';
    }
    const p = this.config.partitions;
    if (now - this.changedAt < p.minStableTicks) return undefined;
    if (!this.partitioned && this.rng.nextFloat() < p.startProbability) {
      this.partition(this.pickKind());
      this.changedAt = now;
      return this.current;
    }
    if (this.partitioned && this.rng.nextFloat() < p.healProbability) {
      this.heal();
      this.changedAt = now;
      return 'healed';
    }
    return undefined;
  }

  private pickKind(): PartitionKind {
    const r = this.rng.nextFloat();
    if (r < 0.3) return 'isolate-one';
    if (r < 0.6) return 'split';
    if (r < 0.72) return 'asymmetric-in';
    if (r < 0.85) return 'asymmetric-out';
    return 'random-links';
  }

  private pickNode(): NodeId {
    return this.ids[this.rng.nextInt(this.ids.length)]!;
  }

  /** Cuts links according to `kind`. */
  partition(kind: PartitionKind): void {
    this.cut.clear();
    this.partitioned = true;
    this.current = kind;
    const cutBoth = (a: NodeId, b: NodeId): void => {
      this.cut.add(SimNetwork.link(a, b));
      this.cut.add(SimNetwork.link(b, a));
    };
    if (kind === 'split') {
      const side = new Map(this.ids.map((id) => [id, this.rng.nextInt(2)]));
      for (const a of this.ids) for (const b of this.ids) if (side.get(a) !== side.get(b)) this.cut.add(SimNetwork.link(a, b));
      return;
    }
    if (kind === 'random-links') {
      for (const a of this.ids) for (const b of this.ids) if (a !== b && this.rng.nextFloat() < 0.3) this.cut.add(SimNetwork.link(a, b));
      return;
    }
    const victim = this.pickNode();
    for (const other of this.ids) {
      if (other === victim) continue;
      if (kind === 'isolate-one') cutBoth(victim, other);
      // 'asymmetric-in': the victim can send but hears nothing; 'asymmetric-out': the reverse.
      else if (kind === 'asymmetric-in') this.cut.add(SimNetwork.link(other, victim));
      else this.cut.add(SimNetwork.link(victim, other));
    }
  }

  heal(): void {
    this.cut.clear();
    this.partitioned = false;
    this.current = undefined;
  }

  /** Stops all faults (drops, duplicates, partitions, clogs) for the liveness phase; delays remain. */
  disableFaults(): void {
    this.faultsEnabled = false;
    this.cloggedUntil.clear();
    this.heal();
  }

  /**
   * Decides the fate of a message sent now and calls `deliverAt` once per copy that will arrive.
   */
  send(now: number, m: Message, deliverAt: (time: number) => void): MessageFate {
    if (!this.connected(m.from, m.to)) return 'partitioned';
    if (this.faultsEnabled && this.rng.nextFloat() < this.config.dropRate) return 'dropped';
    // A clogged sender's messages wait until the clog clears.
    const from = Math.max(now, this.cloggedUntil.get(m.from) ?? 0);
    deliverAt(from + this.delay());
    if (this.faultsEnabled && this.rng.nextFloat() < this.config.duplicateRate) {
      deliverAt(from + this.delay());
      return 'duplicated';
    }
    return 'delivered';
  }

  private delay(): number {
    const { minDelayTicks, maxDelayTicks } = this.config;
    return minDelayTicks + this.rng.nextInt(maxDelayTicks - minDelayTicks + 1);
  }
}
