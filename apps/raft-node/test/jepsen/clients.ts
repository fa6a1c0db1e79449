// Jepsen-style clients: concurrent put / get / compare-and-set on a few hot keys (plus puts of
// fresh keys, to check at the end that no acknowledged write is missing), recorded in one history
// against one monotonic clock.
import { HistoryRecorder, type KvInput, type KvOutput } from '@ward/testing/linearizability';
import { casRequest, getRequest, putRequest, type LocalCluster, type NodeAnswer } from '@ward/testing/cluster';
import type { SeededRng } from '@ward/shared/clock';
import { valueOf } from '../helpers';

export interface ClientStats {
  ok: number;
  failed: number;
  unknown: number;
}

export interface Workload {
  readonly recorder: HistoryRecorder<KvInput, KvOutput>;
  /** Fresh keys whose put was acknowledged: every one must exist at the end. */
  readonly acknowledgedFresh: Set<string>;
  readonly stats: ClientStats;
  /** Writes whose outcome the client never learned: their history handle and the unique value written. */
  readonly unknownWrites: readonly { readonly handle: number; readonly value: string }[];
  stop(): Promise<void>;
}

const PROPOSE_TIMEOUT_MS = 1500;
const RPC_DEADLINE_MS = 2500;
/** Wire errors that mean "not proposed": the operation did not and will not happen. */
const DEFINITE_FAILURES = new Set(['etcdserver: too many requests', 'etcdserver: request is too large']);

export interface WorkloadOptions {
  readonly clients: number;
  /** Hot keys per generation. */
  readonly keys: number;
  /**
   * Every this-many milliseconds the clients move to a fresh set of keys (Jepsen's independent
   * keys): each key sees a bounded number of operations, which keeps the per-key search small
   * however long the run.
   */
  readonly keyGenerationMs: number;
  readonly rng: SeededRng;
  readonly now: () => number;
  /** The members to talk to (default: every member of the cluster), asked before each operation: the cluster may grow and shrink. */
  readonly members?: () => readonly bigint[];
}

/** The hot key `index` of generation `generation`. */
export function hotKey(generation: number, index: number): string {
  return `g${generation}-k${index}`;
}

export function startWorkload(cluster: LocalCluster, options: WorkloadOptions): Workload & { generation(): number } {
  const recorder = new HistoryRecorder<KvInput, KvOutput>(options.now);
  const acknowledgedFresh = new Set<string>();
  const stats: ClientStats = { ok: 0, failed: 0, unknown: 0 };
  const unknownWrites: { handle: number; value: string }[] = [];
  const members = options.members ?? (() => cluster.members.map((m) => m.id));
  let stopped = false;
  let leaderGuess = members()[0]!;
  /** The member after `id` in the current list (the first when `id` left). */
  const nextMember = (id: bigint): bigint => {
    const ids = members();
    return ids[(ids.indexOf(id) + 1) % ids.length]!;
  };
  const startedAt = options.now();
  const generation = (): number => Math.floor((options.now() - startedAt) / options.keyGenerationMs);

  const runOne = async (client: number, rng: SeededRng, counter: number, seen: Map<string, string | null>): Promise<void> => {
    const key = hotKey(generation(), rng.nextInt(options.keys));
    const value = `c${client}-${counter}`;
    const roll = rng.nextInt(10);
    if (roll < 4) {
      // linearizable read on any member (ReadIndex)
      const ids = members();
      const member = ids[rng.nextInt(ids.length)]!;
      const handle = recorder.invoke(client, { kind: 'get', key });
      try {
        const answer = await cluster.client(member).read(getRequest(key), false, PROPOSE_TIMEOUT_MS, RPC_DEADLINE_MS);
        if (answer.kind === 'ok') {
          const read = valueOf(answer);
          recorder.complete(handle, { kind: 'get', value: read });
          seen.set(key, read);
          stats.ok++;
        } else {
          recorder.fail(handle);
          stats.failed++;
        }
      } catch {
        recorder.fail(handle); // a read that got no answer changed nothing
        stats.failed++;
      }
      return;
    }
    const fresh = roll === 9;
    const target = fresh ? `fresh-${value}` : key;
    // a compare-and-set expects what this client last saw of the key (null: absent)
    const expected = seen.get(key) ?? null;
    const input: KvInput = roll < 7 || fresh ? { kind: 'put', key: target, value } : { kind: 'cas', key, compare: { value: expected }, value };
    const request = input.kind === 'put' ? putRequest(input.key, input.value) : casRequest(key, expected, value);
    const handle = recorder.invoke(client, input);
    let answer: NodeAnswer;
    try {
      answer = await cluster.client(leaderGuess).propose(request, PROPOSE_TIMEOUT_MS, RPC_DEADLINE_MS);
    } catch {
      // no answer: it may or may not have been applied
      stats.unknown++;
      unknownWrites.push({ handle, value });
      leaderGuess = nextMember(leaderGuess);
      return;
    }
    if (answer.kind === 'ok') {
      if (input.kind === 'put') {
        recorder.complete(handle, { kind: 'put' });
        if (!fresh) seen.set(key, value);
      } else {
        const succeeded = answer.response.type === 'txn' && answer.response.response.succeeded;
        recorder.complete(handle, { kind: 'cas', succeeded });
        if (succeeded) seen.set(key, value);
      }
      if (fresh) acknowledgedFresh.add(target);
      stats.ok++;
    } else if (answer.kind === 'notLeader') {
      recorder.fail(handle);
      stats.failed++;
      leaderGuess = answer.leaderId !== 0n && members().includes(answer.leaderId) ? answer.leaderId : nextMember(leaderGuess);
    } else if (DEFINITE_FAILURES.has(answer.message)) {
      recorder.fail(handle);
      stats.failed++;
    } else {
      stats.unknown++; // timed out after proposing: left open
      unknownWrites.push({ handle, value });
    }
  };

  const loops = Array.from({ length: options.clients }, async (_, client) => {
    const rng = options.rng.fork();
    const seen = new Map<string, string | null>();
    for (let counter = 0; !stopped; counter++) {
      await runOne(client, rng, counter, seen);
      if (stats.failed % 20 === 19) await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    recorder,
    acknowledgedFresh,
    stats,
    unknownWrites,
    generation,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
