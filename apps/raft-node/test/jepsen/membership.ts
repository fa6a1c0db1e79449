// Membership steps for the nemesis (nemesis.ts takes one after each fault): grow a 3-member
// cluster to 5 and shrink it back to 3. Each newcomer is added as a learner (MemberAdd), started
// with RAFT_NODE_INITIAL_CLUSTER_STATE=existing and catches up, then is promoted; leadership moves
// to the first newcomer before the second joins (which must then answer a leader its own initial
// member list does not name); then an original member (the leader when it is one) and the first
// newcomer are removed. A removed member must exit by itself, as etcd does.
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import type { NodeResponse__Output } from '@ward/etcd/proto';
import type { SeededRng } from '@ward/shared/clock';
import type { LocalCluster, NodeApiClient, PlannedMember } from '@ward/testing/cluster';
import type { NetProxy } from '@ward/testing/net-proxy';
import type { MembershipStep } from './nemesis';

/** How long one attempt of a step keeps retrying transient refusals before giving the nemesis its turn. */
const ATTEMPT_MS = 15_000;
/** How long a removed member may take to exit by itself. */
const EXIT_WAIT_MS = 15_000;
/** Refusals that pass: health (etcd's 5 s interval after a reconnect), catch-up, elections, timeouts. */
const TRANSIENT = /unhealthy cluster|in sync with leader|not enough started|request timed out|leader changed|no answer|not_leader|too many requests/;

type ChangeRequest = Parameters<NodeApiClient['memberChange']>[0];

export interface GrowShrink {
  readonly steps: readonly MembershipStep[];
  /** The members in the cluster now (the nemesis and the clients use these). */
  members(): bigint[];
  /** What happened to the members removed: how each process ended. */
  readonly removedExits: { id: string; code: number | null; signal: string | null; exitedByItself: boolean }[];
  /** Voters seen right after the second promotion. */
  readonly votersAtFive: () => number;
}

export function growShrinkSteps(cluster: LocalCluster<NetProxy>, rng: SeededRng): GrowShrink {
  const roster: bigint[] = cluster.members.map((m) => m.id);
  const originals = [...roster];
  const removedExits: GrowShrink['removedExits'] = [];
  const newcomers: bigint[] = [];
  let votersAtFive = 0;
  const others = (): bigint[] => cluster.members.map((m) => m.id).filter((id) => !roster.includes(id));

  /** Sends `request` to the leader, retrying transient refusals until ATTEMPT_MS passed: the answer, or undefined. */
  const change = async (request: ChangeRequest, accept: (message: string) => boolean = () => false): Promise<NodeResponse__Output | 'accepted' | undefined> => {
    const deadline = Date.now() + ATTEMPT_MS;
    while (Date.now() < deadline) {
      const leader = await cluster.waitForLeader(5000, others()).catch(() => undefined);
      if (leader === undefined) continue;
      const answer = await cluster.client(leader).memberChange(request, 8000).catch(() => undefined);
      if (answer?.result === 'response') return answer;
      const message = answer?.error?.message ?? (answer?.result === 'not_leader' ? 'not_leader' : 'no answer');
      if (accept(message)) return 'accepted';
      if (!TRANSIENT.test(message)) throw new Error(`${request.kind} refused: ${message}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    return undefined;
  };

  const addLearner = (): MembershipStep => {
    let planned: PlannedMember | undefined;
    return {
      name: 'add learner',
      attempt: async () => {
        planned ??= await cluster.planMember();
        const url = planned.peerUrl;
        // a lost answer to an add that applied: a retry finds the URL taken; the list has its id
        const answer = await change({ kind: 'ADD', peer_urls: [url], is_learner: true }, (message) => message === 'etcdserver: Peer URLs already exists');
        if (answer === undefined) return false;
        let id: bigint;
        if (answer === 'accepted') {
          const leader = await cluster.waitForLeader(5000, others());
          id = BigInt((await cluster.client(leader).memberList()).members.find((m) => m.peer_urls.includes(url))!.id);
        } else {
          id = BigInt(decodeEtcdMessage<{ member: { ID: string } }>('etcdserverpb.MemberAddResponse', answer.response!).member.ID);
        }
        await cluster.joinMember(id, planned, [...roster]);
        roster.push(id);
        newcomers.push(id);
        return true;
      },
    };
  };

  const promote = (index: number): MembershipStep => ({
    name: 'promote',
    attempt: async () => {
      const id = newcomers[index]!;
      const answer = await change({ kind: 'PROMOTE', id }, (message) => message === 'etcdserver: can only promote a learner member');
      if (answer === undefined) return false;
      if (index === 1) {
        const leader = await cluster.waitForLeader(10_000, others());
        votersAtFive = (await cluster.client(leader).memberList()).members.filter((m) => !m.is_learner).length;
      }
      return true;
    },
  });

  const leadershipTo = (index: number): MembershipStep => ({
    name: 'move leader to the newcomer',
    attempt: async () => {
      const target = newcomers[index]!;
      const leader = await cluster.waitForLeader(10_000, others()).catch(() => undefined);
      if (leader === target) return true;
      if (leader === undefined) return false;
      await cluster.client(leader).moveLeader(target).catch(() => undefined);
      return (await cluster.waitForLeader(10_000, others()).catch(() => undefined)) === target;
    },
  });

  const remove = (pick: () => Promise<bigint>): MembershipStep => {
    let victim: bigint | undefined;
    return {
      name: 'remove',
      attempt: async () => {
        victim ??= await pick();
        const answer = await change({ kind: 'REMOVE', id: victim }, (message) => message === 'etcdserver: member not found');
        if (answer === undefined) return false;
        roster.splice(roster.indexOf(victim), 1);
        // it exits by itself once it learns it was removed (at once, or by asking the others)
        const process = cluster.member(victim).process;
        const exited = process === undefined ? undefined : await Promise.race([process.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), EXIT_WAIT_MS))]);
        if (exited === undefined) await cluster.kill(victim);
        const final = await process?.exited;
        removedExits.push({ id: victim.toString(), code: final?.code ?? null, signal: final?.signal ?? null, exitedByItself: exited !== undefined });
        return true;
      },
    };
  };

  /** An original member: the leader when an original leads and the coin says so, else a follower. */
  const pickOriginal = async (): Promise<bigint> => {
    const leader = await cluster.waitForLeader(10_000, others()).catch(() => undefined);
    const candidates = originals.filter((id) => roster.includes(id));
    if (leader !== undefined && candidates.includes(leader) && rng.nextInt(2) === 0) return leader;
    const followers = candidates.filter((id) => id !== leader);
    return followers[rng.nextInt(followers.length)]!;
  };

  return {
    steps: [addLearner(), promote(0), leadershipTo(0), addLearner(), promote(1), remove(pickOriginal), remove(async () => newcomers[0]!)],
    members: () => [...roster],
    removedExits,
    votersAtFive: () => votersAtFive,
  };
}
