import { ROOT_PASSWORD, resetTarget, setupAuth, type LeaseSpec, type RoleSpec, type UserSpec } from './auth-setup';
import { runEtcdctl, startEtcdctl, type Credentials, type EtcdctlResult, type EtcdctlWatch } from './etcdctl';
import { EtcdGrpcClient } from './grpc-client';
import { etcdctlError, normalizeStderr, normalizeStdout, type NormalizeContext } from './normalize';
import type { Target } from './target';

/** What a step must show. All given conditions must hold. */
export interface Expectation {
  /** Normalised stdout, exactly (a trailing newline is ignored). Implies exit 0 unless `exit`/`error` say otherwise. */
  readonly out?: string;
  /** Substrings normalised stdout must contain. */
  readonly outIncludes?: readonly string[];
  /** Substrings normalised stderr must contain. */
  readonly errIncludes?: readonly string[];
  /** etcdctl's `Error: <text>` line, exactly; implies a non-zero exit. */
  readonly error?: string;
  /** Exit code, exactly. */
  readonly exit?: number;
  /** Skip the exit-code check (background watches stopped by SIGINT). */
  readonly exitUnchecked?: boolean;
}

/** One etcdctl invocation. `as` names a user whose password is in the scenario's password book. */
export interface CtlStep {
  readonly ctl: readonly string[];
  readonly as?: string;
  /** Overrides the password-book entry (wrong-password steps). */
  readonly password?: string;
  readonly stdin?: string;
  readonly expect: Expectation;
  readonly note?: string;
  /** Wall-clock limit of this invocation (default: runEtcdctl's), for steps etcdctl itself makes long. */
  readonly timeoutMs?: number;
}

/** Starts `etcdctl watch ...` in the background under an id; it runs while later steps execute. */
export interface WatchStartStep {
  readonly watchStart: string;
  readonly ctl: readonly string[];
  readonly as?: string;
  readonly note?: string;
}

/** Waits for a background watch's output (or its exit), stops it and checks it. */
export interface WatchEndStep {
  readonly watchEnd: string;
  /** Wait until normalised stdout contains this, or the watch exited by itself. */
  readonly waitFor?: string;
  readonly expect: Expectation;
  readonly note?: string;
}

export type Step = CtlStep | WatchStartStep | WatchEndStep;

/** A scripted etcdctl session. */
export interface Scenario {
  readonly name: string;
  /** Where the expected behaviour comes from: spec section or §7 checklist rows. */
  readonly spec: string;
  /** Created through the API before the first step (root + root role always, auth enabled unless `enable: false`). */
  readonly setup?: { readonly roles?: readonly RoleSpec[]; readonly users?: readonly UserSpec[]; readonly leases?: readonly LeaseSpec[]; readonly enable?: boolean };
  /** Passwords of users the steps act as (root's is added). */
  readonly passwords?: Readonly<Record<string, string>>;
  readonly steps: readonly Step[];
}

/** One step's normalised outcome: what the differential comparison looks at. */
export interface StepRecord {
  readonly step: number;
  readonly label: string;
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ScenarioRun {
  readonly records: readonly StepRecord[];
  /** Expectation mismatches, one line each; empty when the target behaved as scripted. */
  readonly failures: readonly string[];
}

/** A background watch gets this long to be established before the next step runs. */
const WATCH_SETTLE_MS = 1000;
const WATCH_WAIT_MS = 10_000;

/** Runs a scenario on a target from a reset state and returns its normalised transcript. */
export async function runScenario(target: Target, scenario: Scenario): Promise<ScenarioRun> {
  const client = new EtcdGrpcClient(target.clientEndpoint);
  try {
    await resetTarget(client);
    if (scenario.setup) await setupAuth(client, scenario.setup);
  } finally {
    client.close();
  }
  const baselineRevision = await baselineFromEtcdctl(target, scenario.setup !== undefined && scenario.setup.enable !== false);
  const context: NormalizeContext = { baselineRevision, endpoints: target.clientEndpoints };
  const passwords: Record<string, string> = { root: ROOT_PASSWORD, ...scenario.passwords };
  const watches = new Map<string, EtcdctlWatch>();
  const records: StepRecord[] = [];
  const failures: string[] = [];
  let settlePending = false;
  try {
    for (const [index, step] of scenario.steps.entries()) {
      const label = stepLabel(step);
      if ('watchStart' in step) {
        watches.set(step.watchStart, startEtcdctl({ endpoints: [target.clientEndpoint], args: step.ctl, user: credentials(step.as, undefined, passwords) }));
        settlePending = true;
        continue;
      }
      if (settlePending) {
        // Watches started back to back share one settle period before the next step runs.
        await new Promise((done) => setTimeout(done, WATCH_SETTLE_MS));
        settlePending = false;
      }
      const isWatch = 'watchEnd' in step;
      const result = isWatch ? await endWatch(watches, step, context) : await runCtlStep(target, step, passwords);
      const record = normalizeRecord(index, label, result, context);
      records.push(record);
      // A watch is ended by SIGINT unless it ended itself, so only an explicit exit is checked.
      const expectation = isWatch && step.expect.exit === undefined ? { ...step.expect, exitUnchecked: true } : step.expect;
      for (const problem of checkExpectation(record, expectation)) failures.push(`step ${index} (${label}): ${problem}`);
    }
  } finally {
    await Promise.all([...watches.values()].map((watch) => watch.stop()));
  }
  return { records, failures };
}

function stepLabel(step: Step): string {
  const who = 'as' in step && step.as !== undefined ? `[${step.as}] ` : '';
  if ('watchStart' in step) return `${who}start ${step.watchStart}: etcdctl ${step.ctl.join(' ')}`;
  if ('watchEnd' in step) return `end ${step.watchEnd}`;
  return `${who}etcdctl ${step.ctl.join(' ')}`;
}

function credentials(user: string | undefined, override: string | undefined, passwords: Record<string, string>): Credentials | undefined {
  if (user === undefined) return undefined;
  const password = override ?? passwords[user];
  if (password === undefined) throw new TypeError(`scenario: no password for user ${user}`);
  return { name: user, password };
}

function runCtlStep(target: Target, step: CtlStep, passwords: Record<string, string>): Promise<EtcdctlResult> {
  return runEtcdctl({
    endpoints: [target.clientEndpoint],
    args: step.ctl,
    user: credentials(step.as, step.password, passwords),
    stdin: step.stdin,
    ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
  });
}

async function endWatch(watches: Map<string, EtcdctlWatch>, step: WatchEndStep, context: NormalizeContext): Promise<EtcdctlResult> {
  const watch = watches.get(step.watchEnd);
  if (watch === undefined) throw new TypeError(`scenario: no watch ${step.watchEnd}`);
  watches.delete(step.watchEnd);
  const waitFor = step.waitFor;
  if (waitFor === undefined && step.expect.exit !== undefined && step.expect.exit !== 0) {
    // Expected to end by itself (a canceled watch): give it time to do so.
    const timeout = new Promise((done) => setTimeout(done, WATCH_WAIT_MS));
    await Promise.race([watch.exited(), timeout]);
  }
  if (waitFor !== undefined) {
    const exited = watch.exited().then(() => true);
    const seen = watch
      .waitForStdout((stdout) => normalizeStdout(stdout, context).includes(waitFor), WATCH_WAIT_MS)
      .then(() => true, () => false);
    await Promise.race([exited, seen]);
  }
  return watch.stop();
}

/** The revision right before the first step, read with etcdctl as the scenario's steps will. */
async function baselineFromEtcdctl(target: Target, authEnabled: boolean): Promise<number> {
  const result = await runEtcdctl({
    endpoints: [target.clientEndpoint],
    args: ['get', 'ward-baseline', '-w', 'json'],
    user: authEnabled ? { name: 'root', password: ROOT_PASSWORD } : undefined,
  });
  const match = /"revision":(\d+)/.exec(result.stdout);
  if (result.exitCode !== 0 || match === null) {
    throw new Error(`baseline revision: etcdctl get failed (${result.exitCode}): ${result.stderr}`);
  }
  return Number(match[1]);
}

function normalizeRecord(step: number, label: string, result: EtcdctlResult, context: NormalizeContext): StepRecord {
  return {
    step,
    label,
    exitCode: result.exitCode,
    stdout: normalizeStdout(result.stdout, context),
    stderr: normalizeStderr(result.stderr, context),
  };
}

/** Lists how a record misses its expectation (empty when it meets it). */
export function checkExpectation(record: StepRecord, expect: Expectation): string[] {
  const problems: string[] = [];
  const defaultExit = expect.error === undefined && expect.exitUnchecked !== true ? 0 : undefined;
  const expectedExit = expect.exit ?? defaultExit;
  if (expectedExit !== undefined && record.exitCode !== expectedExit) {
    problems.push(`exit ${record.exitCode}, expected ${expectedExit} (stderr: ${record.stderr.trim()})`);
  }
  if (expect.error !== undefined) {
    const error = etcdctlError(record.stderr);
    if (record.exitCode === 0) problems.push(`succeeded, expected error ${expect.error}`);
    if (error !== expect.error) problems.push(`error ${JSON.stringify(error)}, expected ${JSON.stringify(expect.error)}`);
  }
  if (expect.out !== undefined && record.stdout.replace(/\n+$/, '') !== expect.out.replace(/\n+$/, '')) {
    problems.push(`stdout ${JSON.stringify(record.stdout)}, expected ${JSON.stringify(expect.out)}`);
  }
  for (const part of expect.outIncludes ?? []) {
    if (!record.stdout.includes(part)) problems.push(`stdout ${JSON.stringify(record.stdout)} lacks ${JSON.stringify(part)}`);
  }
  for (const part of expect.errIncludes ?? []) {
    if (!record.stderr.includes(part)) problems.push(`stderr ${JSON.stringify(record.stderr)} lacks ${JSON.stringify(part)}`);
  }
  return problems;
}
