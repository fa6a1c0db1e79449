// The nemesis: one fault at a time, drawn from a seeded schedule: kill -9 and restart a member
// (the leader half of the time), pause it (SIGSTOP / SIGCONT), isolate it behind blackholed links,
// delay its links, or cut its connections.
import type { SeededRng } from '@ward/shared/clock';
import type { LocalCluster } from '@ward/testing/cluster';
import type { NetProxy } from '@ward/testing/net-proxy';

export type FaultKind = 'kill' | 'pause' | 'partition' | 'delay' | 'cut';

export interface FaultRecord {
  readonly kind: FaultKind;
  readonly member: string;
  readonly atMs: number;
  readonly durationMs: number;
}

const FAULTS: readonly FaultKind[] = ['kill', 'pause', 'partition', 'delay', 'cut'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Links from and to `member`. */
function linksOf(cluster: LocalCluster<NetProxy>, member: bigint): NetProxy[] {
  return cluster.members.filter((m) => m.id !== member).flatMap((m) => [cluster.proxy(member, m.id), cluster.proxy(m.id, member)]);
}

async function currentLeader(cluster: LocalCluster<NetProxy>): Promise<bigint | undefined> {
  const statuses = await cluster.statuses(500);
  const named = statuses.map((s) => s?.leader_id).filter((id) => id !== undefined && id !== '0');
  return named.length > 0 ? BigInt(named[0]!) : undefined;
}

/** Runs faults for `durationMs`, then heals everything. Returns what it did. */
export async function runNemesis(cluster: LocalCluster<NetProxy>, rng: SeededRng, durationMs: number, now: () => number): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  const start = now();
  const ids = cluster.members.map((m) => m.id);
  let round: FaultKind[] = [];
  while (now() - start < durationMs) {
    await sleep(300 + rng.nextInt(700));
    // every kind once per round, in a seeded order
    if (round.length === 0) round = shuffled(FAULTS, rng);
    const kind = round.pop()!;
    const leader = rng.nextInt(2) === 0 ? await currentLeader(cluster) : undefined;
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
  }
  await healAll(cluster);
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

/** Every link healed, every member running and continued. */
export async function healAll(cluster: LocalCluster<NetProxy>): Promise<void> {
  for (const proxy of cluster.proxies.values()) proxy.heal();
  for (const member of cluster.members) {
    if (member.process?.running) cluster.resume(member.id);
    else await cluster.startMember(member.id);
  }
}
