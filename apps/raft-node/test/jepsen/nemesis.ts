// The nemesis: one fault at a time, drawn from a seeded schedule: kill -9 and restart a member
// (the leader half of the time), pause it (SIGSTOP / SIGCONT), isolate it behind blackholed links,
// delay its links, or cut its connections. Given membership steps (jepsen/membership.ts), it takes
// one after each fault, as Jepsen's membership nemesis does, until all are done: the cluster
// changes shape between faults, and the faults hit whichever members it has at the time.
import type { SeededRng } from '@ward/shared/clock';
import type { LocalCluster } from '@ward/testing/cluster';
import type { NetProxy } from '@ward/testing/net-proxy';

export type FaultKind = 'kill' | 'pause' | 'partition' | 'delay' | 'cut';

export interface FaultRecord {
  readonly kind: FaultKind | 'membership';
  /** The member faulted, or the membership step taken. */
  readonly member: string;
  readonly atMs: number;
  readonly durationMs: number;
  /** For a membership step: whether it completed (else it is attempted again after the next fault). */
  readonly done?: boolean;
}

/** A membership change the nemesis takes between faults: `attempt` resolves true once it is done. */
export interface MembershipStep {
  readonly name: string;
  attempt(): Promise<boolean>;
}

export interface NemesisOptions {
  /** The members to fault (default: every member of the cluster): those in the cluster now. */
  readonly members?: () => readonly bigint[];
  /** Membership steps, in order; the run goes on past its duration until they are done. */
  readonly steps?: readonly MembershipStep[];
  /** How long past the duration the run may go on for unfinished steps (default 120 s). */
  readonly maxOverrunMs?: number;
}

const FAULTS: readonly FaultKind[] = ['kill', 'pause', 'partition', 'delay', 'cut'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Links from and to `member` (see LocalCluster.links for members that joined later). */
function linksOf(cluster: LocalCluster<NetProxy>, member: bigint): NetProxy[] {
  return cluster.links(member);
}

async function currentLeader(cluster: LocalCluster<NetProxy>, ids: readonly bigint[]): Promise<bigint | undefined> {
  const statuses = await cluster.statuses(500);
  const named = statuses.map((s) => s?.leader_id).filter((id) => id !== undefined && id !== '0' && ids.includes(BigInt(id)));
  return named.length > 0 ? BigInt(named[0]!) : undefined;
}

/**
 * Runs faults for `durationMs` (and membership steps, longer if they are not done by then, up to
 * the overrun), then heals everything. Returns what it did.
 */
export async function runNemesis(cluster: LocalCluster<NetProxy>, rng: SeededRng, durationMs: number, now: () => number, options: NemesisOptions = {}): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  const start = now();
  const members = options.members ?? (() => cluster.members.map((m) => m.id));
  const steps = [...(options.steps ?? [])];
  const overrunMs = options.maxOverrunMs ?? 120_000;
  let round: FaultKind[] = [];
  while ((now() - start < durationMs || steps.length > 0) && now() - start < durationMs + overrunMs) {
    await sleep(300 + rng.nextInt(700));
    // every kind once per round, in a seeded order
    if (round.length === 0) round = shuffled(FAULTS, rng);
    const kind = round.pop()!;
    const ids = members();
    const leader = rng.nextInt(2) === 0 ? await currentLeader(cluster, ids) : undefined;
    const member = leader ?? ids[rng.nextInt(ids.length)]!;
    const faultMs = 800 + rng.nextInt(2000);
    const atMs = now() - start;
    switch (kind) {
      case 'kill':
        await cluster.kill(member, 'SIGKILL');
        await sleep(faultMs);
        await cluster.startMember(member);
        break;
      case 'pause':
        cluster.pause(member);
        await sleep(faultMs);
        cluster.resume(member);
        break;
      case 'partition':
        for (const link of linksOf(cluster, member)) link.setFault('both', { kind: 'blackhole' });
        await sleep(faultMs);
        for (const link of linksOf(cluster, member)) link.heal();
        break;
      case 'delay':
        for (const link of linksOf(cluster, member)) link.setFault('both', { kind: 'delay', delayMs: 20 + rng.nextInt(150), jitterMs: 50 });
        await sleep(faultMs);
        for (const link of linksOf(cluster, member)) link.heal();
        break;
      case 'cut':
        for (const link of linksOf(cluster, member)) link.cut();
        await sleep(faultMs / 4);
        break;
    }
    records.push({ kind, member: member.toString(), atMs: Math.round(atMs), durationMs: Math.round(now() - start - atMs) });
    const step = steps[0];
    if (step !== undefined) {
      const stepAt = now() - start;
      const done = await step.attempt();
      if (done) steps.shift();
      records.push({ kind: 'membership', member: step.name, atMs: Math.round(stepAt), durationMs: Math.round(now() - start - stepAt), done });
    }
  }
  await healAll(cluster, members());
  return records;
}

function shuffled<T>(items: readonly T[], rng: SeededRng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Every link healed, every member (of `ids`, default all) running and continued. */
export async function healAll(cluster: LocalCluster<NetProxy>, ids: readonly bigint[] = cluster.members.map((m) => m.id)): Promise<void> {
  for (const proxy of cluster.allProxies()) proxy.heal();
  for (const id of ids) {
    if (cluster.member(id).process?.running) cluster.resume(id);
    else await cluster.startMember(id);
  }
}
