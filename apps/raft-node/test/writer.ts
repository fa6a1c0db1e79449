// Clients that keep writing unique keys through whichever member leads, following NotLeader
// answers, and remember every write the cluster acknowledged.
import { putRequest, type LocalCluster } from '@ward/testing/cluster';

export interface Writers {
  /** Keys whose write was acknowledged (applied and answered). */
  readonly acknowledged: Set<string>;
  readonly attempted: () => number;
  stop(): Promise<void>;
}

export function startWriters(cluster: LocalCluster, count: number, prefix: string): Writers {
  const acknowledged = new Set<string>();
  let stopped = false;
  let attempted = 0;
  let target = cluster.members[0]!.id;
  const loop = async (client: number): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      const key = `${prefix}-${client}-${i}`;
      attempted++;
      try {
        const answer = await cluster.client(target).propose(putRequest(key, key), 2000, 3000);
        if (answer.kind === 'ok') acknowledged.add(key);
        else if (answer.kind === 'notLeader' && answer.leaderId !== 0n) target = answer.leaderId;
        else await new Promise((r) => setTimeout(r, 50));
      } catch {
        // unreachable member: try another one
        const ids = cluster.members.map((m) => m.id);
        target = ids[(ids.indexOf(target) + 1) % ids.length]!;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const loops = Array.from({ length: count }, (_, i) => loop(i));
  return {
    acknowledged,
    attempted: () => attempted,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
