// One Jepsen-style run: a 3-member cluster behind fault-injecting proxies, concurrent clients,
// the nemesis, then the verdicts: the history is linearizable, and no acknowledged write is missing.
import { checkLinearizability, formatCheckResult, kvModel, type Budget, type CheckResult, type KvInput, type KvOutput, type Operation } from '@ward/testing/linearizability';
import { LocalCluster, getRequest } from '@ward/testing/cluster';
import { startNetProxy, type NetProxy } from '@ward/testing/net-proxy';
import { SeededRng, systemClock } from '@ward/shared/clock';
import { openWatch, valueOf } from '../helpers';
import { hotKey, startWorkload, type ClientStats, type Workload } from './clients';
import { growShrinkSteps, type GrowShrink } from './membership';
import { runNemesis, type FaultRecord } from './nemesis';

export interface JepsenOptions {
  readonly entry: string;
  readonly seed: number;
  /** How long the nemesis injects faults. */
  readonly faultSeconds: number;
  readonly clients: number;
  readonly keys: number;
  /** Clients move to fresh keys this often (see WorkloadOptions). */
  readonly keyGenerationMs: number;
  readonly maxCheckSteps: number;
  /** Wall-time budget of the linearizability check; running out is a verdict of `unknown`. */
  readonly maxCheckMs: number;
  /** Grow to 5 members and shrink back to 3 between the faults (membership.ts). */
  readonly growShrink?: boolean;
}

/** What a grow-and-shrink run did to the member list. */
export interface MembershipReport {
  readonly stepsDone: number;
  readonly stepsPlanned: number;
  readonly votersAtFive: number;
  /** Member ids (decimal) listed at the end. */
  readonly finalMembers: readonly string[];
  readonly expectedMembers: readonly string[];
  readonly removedExits: GrowShrink['removedExits'];
}

/** The verdicts on a workload's history, once its clients stopped (see checkWorkload). */
export interface WorkloadVerdicts {
  readonly operations: { readonly total: number; readonly ok: number; readonly failed: number; readonly unknown: number };
  readonly check: CheckResult;
  readonly checkMs: number;
  /** Unknown-outcome writes found never applied (in no member's event history) and recorded as failed. */
  readonly resolvedUnknown: number;
  readonly explanation: string;
  readonly acknowledgedFresh: number;
  readonly missingFresh: readonly string[];
  /** The same history with one stale read appended must be rejected: the check can fail. */
  readonly corruptedVerdict: string | undefined;
}

export interface JepsenReport extends WorkloadVerdicts {
  readonly seed: number;
  readonly faultSeconds: number;
  readonly faults: readonly FaultRecord[];
  readonly faultCounts: Record<string, number>;
  readonly clientStats: ClientStats;
  readonly membership?: MembershipReport;
}

export async function runJepsen(options: JepsenOptions): Promise<JepsenReport> {
  const rng = new SeededRng(options.seed);
  const proxyRng = rng.fork();
  const cluster = await LocalCluster.start<NetProxy>({
    entry: options.entry,
    proxy: (target) => startNetProxy({ ...target, random: () => proxyRng.nextFloat() }),
    // Snapshots and compaction happen during the run too.
    env: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '500', RAFT_NODE_SNAPSHOT_CATCH_UP_ENTRIES_COUNT: '100', RAFT_NODE_LOG_LEVEL: 'info' },
  });
  try {
    await cluster.waitForLeader(30_000);
    const now = (): number => performance.now();
    const membership = options.growShrink === true ? growShrinkSteps(cluster, rng.fork()) : undefined;
    const members = membership?.members ?? (() => cluster.members.map((m) => m.id));
    const workload = startWorkload(cluster, { clients: options.clients, keys: options.keys, keyGenerationMs: options.keyGenerationMs, rng: rng.fork(), now, members });
    const faults = await runNemesis(cluster, rng.fork(), options.faultSeconds * 1000, now, membership === undefined ? {} : { members, steps: membership.steps });
    await new Promise((r) => setTimeout(r, 3000)); // recovery under load
    await workload.stop();
    const verdicts = await checkWorkload(cluster, workload, { ...options, members });
    const faultCounts: Record<string, number> = {};
    for (const fault of faults) faultCounts[fault.kind] = (faultCounts[fault.kind] ?? 0) + 1;
    let membershipReport: MembershipReport | undefined;
    if (membership !== undefined) {
      const leader = await cluster.waitForLeader(60_000, cluster.members.map((m) => m.id).filter((id) => !members().includes(id)));
      const list = await cluster.client(leader).memberList();
      membershipReport = {
        stepsDone: faults.filter((f) => f.kind === 'membership' && f.done === true).length,
        stepsPlanned: membership.steps.length,
        votersAtFive: membership.votersAtFive(),
        finalMembers: list.members.map((m) => m.id).sort(),
        expectedMembers: members().map(String).sort(),
        removedExits: membership.removedExits,
      };
    }
    return {
      seed: options.seed,
      faultSeconds: options.faultSeconds,
      faults,
      faultCounts,
      clientStats: workload.stats,
      ...verdicts,
      ...(membershipReport === undefined ? {} : { membership: membershipReport }),
    };
  } finally {
    await cluster.stop();
  }
}

/**
 * The verdicts on a stopped workload: final linearizable reads of the last generation's hot keys
 * (recorded too); unknown-outcome writes whose unique value no member ever applied recorded as
 * failed; every acknowledged fresh-key write read back; the history checked; and the same history
 * with a stale read appended checked as well (it must be rejected).
 */
export async function checkWorkload(
  cluster: LocalCluster,
  workload: Workload & { generation(): number },
  options: { readonly clients: number; readonly keys: number; readonly maxCheckSteps: number; readonly maxCheckMs: number; readonly members?: () => readonly bigint[] },
): Promise<WorkloadVerdicts> {
  const gone = (): bigint[] => cluster.members.map((m) => m.id).filter((id) => options.members !== undefined && !options.members().includes(id));
  const leader = await cluster.waitForLeader(60_000, gone());
  const last = workload.generation();
  for (let k = 0; k < options.keys; k++) {
    const key = hotKey(last, k);
    const handle = workload.recorder.invoke(options.clients, { kind: 'get', key });
    const answer = await cluster.client(leader).read(getRequest(key), false, 5000);
    workload.recorder.complete(handle, { kind: 'get', value: valueOf(answer) });
  }
  // Were one of these applied after all, a read of its value would make the history illegal.
  const applied = await appliedValues(cluster, leader);
  let resolvedUnknown = 0;
  for (const { handle, value } of workload.unknownWrites) {
    if (applied.has(value)) continue;
    workload.recorder.fail(handle);
    resolvedUnknown++;
  }
  const missingFresh: string[] = [];
  for (const key of workload.acknowledgedFresh) {
    if (valueOf(await cluster.client(leader).read(getRequest(key), false, 5000)) === null) missingFresh.push(key);
  }
  const history = workload.recorder.history();
  const started = performance.now();
  const budget = { maxSteps: options.maxCheckSteps, deadline: { clock: systemClock, timeoutMs: options.maxCheckMs } };
  const check = checkLinearizability(kvModel, history, { budget });
  return {
    operations: {
      total: history.length,
      ok: history.filter((op) => op.status === 'ok').length,
      failed: history.filter((op) => op.status === 'failed').length,
      unknown: history.filter((op) => op.status === 'unknown').length,
    },
    check,
    checkMs: performance.now() - started,
    explanation: check.verdict === 'ok' ? '' : formatCheckResult(kvModel, history, check),
    resolvedUnknown,
    acknowledgedFresh: workload.acknowledgedFresh.size,
    missingFresh,
    corruptedVerdict: corruptedVerdict(history, budget),
  };
}

/**
 * Every value any put applied, from a Watch of the whole key space from revision 1 on the
 * leader (the run never compacts and stays far below the event-history bound).
 */
async function appliedValues(cluster: LocalCluster, leader: bigint): Promise<Set<string>> {
  const target = Number((await cluster.client(leader).status()).revision);
  const watch = openWatch(cluster.client(leader));
  watch.send({ type: 'create', request: { key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]), startRevision: 1, progressNotify: false, filters: ['NODELETE'], prevKv: false, watchId: 0n, fragment: false } });
  const values = new Set<string>();
  const deadline = Date.now() + 60_000;
  let seenRevision = 0;
  while (seenRevision < target) {
    if (Date.now() > deadline) throw new Error(`watch reached revision ${seenRevision} of ${target} in 60 s`);
    for (const response of watch.responses.splice(0)) {
      if (response.canceled) throw new Error(`watch canceled: ${response.cancel_reason || `compacted at ${response.compact_revision}`}`);
      for (const event of response.events) {
        values.add(event.kv!.value.toString());
        seenRevision = Math.max(seenRevision, Number(event.kv!.mod_revision));
      }
      if (!response.created && response.events.length > 0) seenRevision = Math.max(seenRevision, Number(response.header!.revision));
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  watch.close();
  return values;
}

/**
 * Appends, after everything, a read that returns a value some acknowledged put wrote and a later
 * acknowledged put overwrote (values are unique, so nothing can have written it again): a stale
 * read the checker must reject. Undefined when the history has no such pair.
 */
function corruptedVerdict(history: readonly Operation<KvInput, KvOutput>[], budget: Budget): string | undefined {
  const puts = history.filter((op) => op.status === 'ok' && op.input.kind === 'put' && op.input.key.startsWith('g')) as (Operation<KvInput, KvOutput> & { returnTime: number })[];
  for (const older of puts) {
    const newer = puts.find((op) => op.input.key === older.input.key && op.callTime > older.returnTime);
    if (newer === undefined) continue;
    const end = Math.max(...history.map((op) => (op.status === 'ok' ? op.returnTime : op.callTime))) + 1;
    const stale: Operation<KvInput, KvOutput> = {
      clientId: 999,
      input: { kind: 'get', key: older.input.key },
      callTime: end,
      status: 'ok',
      output: { kind: 'get', value: (older.input as Extract<KvInput, { kind: 'put' }>).value },
      returnTime: end + 1,
    };
    return checkLinearizability(kvModel, [...history, stale], { budget }).verdict;
  }
  return undefined;
}

/** A one-paragraph summary for logs and the README. */
export function describeReport(report: JepsenReport): string {
  const faults = Object.entries(report.faultCounts).map(([kind, count]) => `${count} ${kind}`).join(', ');
  const ops = report.operations;
  return [
    `seed ${report.seed}: ${report.faultSeconds} s of faults (${report.faults.length}: ${faults})`,
    `${ops.total} operations checked (${ops.ok} ok, ${ops.failed} failed, ${ops.unknown} unknown outcome; ${report.resolvedUnknown} more unknown ones were never applied and count as failed)`,
    `linearizability: ${report.check.verdict} (${report.check.steps} steps, ${Math.round(report.checkMs)} ms)`,
    `acknowledged fresh-key writes: ${report.acknowledgedFresh}, missing at the end: ${report.missingFresh.length}`,
    `stale read injected into the same history: ${report.corruptedVerdict ?? 'no candidate'}`,
    ...(report.membership === undefined
      ? []
      : [
          `membership: ${report.membership.stepsDone} of ${report.membership.stepsPlanned} steps done, ${report.membership.votersAtFive} voters at the widest, members at the end ${report.membership.finalMembers.join(', ')}`,
          `removed members: ${report.membership.removedExits.map((e) => `${e.id} ${e.exitedByItself ? `exited by itself (code ${e.code})` : `killed (${e.signal})`}`).join('; ')}`,
        ]),
  ].join('\n');
}
