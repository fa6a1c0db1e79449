import type { Rng } from '@ward/shared/clock';
import type { Entry, HardState, Snapshot } from '@ward/raft/core';
import { EMPTY_HARD_STATE } from '@ward/raft/core';

/** What survives a crash. */
export interface DurableImage {
  snapshot: Snapshot | undefined;
  /** Entries after the snapshot, contiguous. */
  entries: Entry[];
  hardState: HardState;
}

type PendingWrite =
  | { readonly kind: 'entries'; readonly entries: readonly Entry[] }
  | { readonly kind: 'hardState'; readonly hardState: HardState }
  | { readonly kind: 'install'; readonly snapshot: Snapshot; readonly entries: readonly Entry[]; readonly hardState: HardState | undefined };

/** How a crash treats writes that were issued but not fsynced. */
export type CrashLoss = 'all' | 'random-prefix';

/**
 * A node's disk: a durable image plus writes issued since the last fsync. A crash keeps the
 * durable image and, with 'random-prefix', a random prefix of the pending writes (a log-structured
 * file torn at a record boundary). Writes are records, not bytes: torn bytes inside a record are
 * the WAL's business (raft/storage), not the consensus core's.
 */
export class SimDisk {
  readonly durable: DurableImage = { snapshot: undefined, entries: [], hardState: EMPTY_HARD_STATE };
  private pending: PendingWrite[] = [];

  writeEntries(entries: readonly Entry[]): void {
    if (entries.length > 0) this.pending.push({ kind: 'entries', entries });
  }

  writeHardState(hardState: HardState): void {
    this.pending.push({ kind: 'hardState', hardState });
  }

  /**
   * A Ready carrying a snapshot received from the leader, with its entries and HardState, as one
   * write: after a crash either all of it is durable or none. This is etcd's boot rule (a
   * snapshot newer than the durable HardState's commit index is not used; the WAL records of the
   * same save precede that HardState) expressed as atomicity: a snapshot without the HardState
   * that commits it would leave a node that cannot start (commit below its snapshot).
   */
  writeInstall(snapshot: Snapshot, entries: readonly Entry[], hardState: HardState | undefined): void {
    this.pending.push({ kind: 'install', snapshot, entries, hardState });
  }

  hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** fsync: every write issued so far becomes durable. */
  sync(): void {
    for (const w of this.pending) this.applyDurably(w);
    this.pending = [];
  }

  /**
   * The application's own snapshot (log compaction): synced with everything before it, then the
   * durable log before `snapshot`'s index is released.
   */
  saveCompactionSnapshot(snapshot: Snapshot): void {
    this.sync();
    const index = snapshot.metadata.index;
    const current = this.durable.snapshot?.metadata.index ?? 0;
    if (index <= current) return;
    this.durable.snapshot = snapshot;
    const first = this.durable.entries[0]?.index;
    if (first !== undefined) this.durable.entries = this.durable.entries.slice(Math.max(0, index + 1 - first));
  }

  /** Power loss: pending writes are lost (or a random prefix survives). */
  crash(rng: Rng, loss: CrashLoss): void {
    const keep = loss === 'all' ? 0 : rng.nextInt(this.pending.length + 1);
    for (let i = 0; i < keep; i++) this.applyDurably(this.pending[i]!);
    this.pending = [];
  }

  private applyDurably(w: PendingWrite): void {
    const d = this.durable;
    if (w.kind === 'hardState') {
      d.hardState = w.hardState;
    } else if (w.kind === 'install') {
      d.snapshot = w.snapshot;
      d.entries = [];
      this.appendDurably(w.entries);
      if (w.hardState !== undefined) d.hardState = w.hardState;
    } else {
      this.appendDurably(w.entries);
    }
  }

  private appendDurably(entries: readonly Entry[]): void {
    const d = this.durable;
    const snapIndex = d.snapshot?.metadata.index ?? 0;
    const fresh = entries.filter((e) => e.index > snapIndex);
    if (fresh.length === 0) return;
    const from = fresh[0]!.index;
    const base = d.entries.length === 0 ? snapIndex + 1 : d.entries[0]!.index;
    const keep = Math.max(0, Math.min(d.entries.length, from - base));
    d.entries = d.entries.slice(0, keep).concat(fresh);
  }

  /** Term of `index` in the durable image (snapshot included), undefined if absent. */
  durableTerm(index: number): number | undefined {
    const snap = this.durable.snapshot;
    if (snap !== undefined && snap.metadata.index === index) return snap.metadata.term;
    const first = this.durable.entries[0]?.index;
    if (first === undefined || index < first) return undefined;
    return this.durable.entries[index - first]?.term;
  }

  /** True if the durable image holds (index, term), directly or covered by its snapshot. */
  durablyHolds(index: number, term: number): boolean {
    const snap = this.durable.snapshot;
    if (snap !== undefined && snap.metadata.index >= index) return true;
    return this.durableTerm(index) === term;
  }
}
