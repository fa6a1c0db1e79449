import type { EtcdServiceName } from '@ward/etcd/proto';
import { resetTarget, setupAuth, type RoleSpec, type UserSpec } from './auth-setup';
import { EtcdGrpcClient, type CallOptions, type GrpcOutcome } from './grpc-client';
import type { Target } from './target';

/** What a gRPC step must return: a status, or success whose normalised response contains `response`. */
export type GrpcExpectation =
  | { readonly code: number; readonly details: string }
  | { readonly ok: true; readonly response?: Readonly<Record<string, unknown>> };

/** One unary call with credentials taken from the scenario's token book. */
export interface GrpcCallStep {
  readonly label: string;
  readonly service: EtcdServiceName;
  readonly method: string;
  /** The request, or a function of the scenario's baseline revision (Compact needs a real revision). */
  readonly request: Readonly<Record<string, unknown>> | ((context: { readonly baselineRevision: number }) => Record<string, unknown>);
  /** Compare only success/status across targets, not the response body (e.g. Status carries versions). */
  readonly outcomeOnly?: boolean;
  /** Name of a saved token sent as metadata `token`. */
  readonly token?: string;
  /** A literal `token` metadata value (garbage, forged, ...). */
  readonly literalToken?: string;
  /** Name of a saved token sent as `authorization: Bearer <token>`. */
  readonly bearer?: string;
  /** For Authenticate: save `response.token` under this name. */
  readonly save?: string;
  /** The target behaviour (etcd 3.7 semantics): what ward must do. */
  readonly expect: GrpcExpectation;
  /**
   * Present when Debian's etcd 3.4.23 knowingly differs (spec §8.2): what it does instead. Such a
   * step is left out of the equality comparison; each side is checked against its own expectation.
   */
  readonly etcd34?: GrpcExpectation;
  /** Never sent to etcd 3.4.23 (e.g. RoleGrantPermission without perm crashes it, spec §8.4). */
  readonly wardOnly?: boolean;
}

/** Opens a Watch stream with a token and sends one create request; the first answer is the outcome. */
export interface GrpcWatchStep {
  readonly label: string;
  readonly watchCreate: Readonly<Record<string, unknown>>;
  readonly token?: string;
  readonly expect: GrpcExpectation;
  readonly etcd34?: GrpcExpectation;
}

/**
 * Decodes a saved JWT (no verification: the server did that) and reports its username and its
 * `revision` claim relative to another saved JWT's — auth-revision arithmetic, comparable across
 * servers whose absolute revisions differ.
 */
export interface GrpcJwtClaimsStep {
  readonly label: string;
  readonly jwtClaimsOf: string;
  readonly relativeTo: string;
  readonly expect: GrpcExpectation;
  readonly etcd34?: GrpcExpectation;
}

export type GrpcStep = GrpcCallStep | GrpcWatchStep | GrpcJwtClaimsStep;

/** A scripted session of raw gRPC calls (what etcdctl cannot express: tokens, metadata, nesting). */
export interface GrpcScenario {
  readonly name: string;
  readonly spec: string;
  readonly setup?: { readonly roles?: readonly RoleSpec[]; readonly users?: readonly UserSpec[]; readonly enable?: boolean };
  readonly steps: readonly GrpcStep[];
}

/** One step's normalised outcome. `differs` marks §8.2 steps (not compared across targets). */
export interface GrpcStepRecord {
  readonly step: number;
  readonly label: string;
  readonly differs: boolean;
  readonly outcome: GrpcOutcome<unknown>;
}

export interface GrpcScenarioRun {
  readonly records: readonly GrpcStepRecord[];
  readonly failures: readonly string[];
}

const WATCH_ANSWER_TIMEOUT_MS = 10_000;

/** Runs a gRPC scenario from a reset state on `target`, checking each step's expectation for that kind of target. */
export async function runGrpcScenario(target: Target, scenario: GrpcScenario): Promise<GrpcScenarioRun> {
  const client = new EtcdGrpcClient(target.clientEndpoint);
  const tokens = new Map<string, string>();
  const records: GrpcStepRecord[] = [];
  const failures: string[] = [];
  try {
    const baselineRevision = await resetTarget(client);
    if (scenario.setup) {
      const rootToken = await setupAuth(client, scenario.setup);
      if (rootToken !== undefined) tokens.set('root', rootToken);
    }
    for (const [index, step] of scenario.steps.entries()) {
      if ('wardOnly' in step && step.wardOnly === true && target.kind === 'etcd') continue;
      const raw =
        'watchCreate' in step
          ? await watchCreate(client, step, tokens)
          : 'jwtClaimsOf' in step
            ? jwtClaims(step, tokens)
            : await callStep(client, step, tokens, baselineRevision);
      const outcome = normalizeOutcome(raw, baselineRevision);
      const differs = step.etcd34 !== undefined;
      const compared = 'outcomeOnly' in step && step.outcomeOnly === true && outcome.ok ? { ok: true as const, response: '<not compared>' } : outcome;
      records.push({ step: index, label: step.label, differs, outcome: compared });
      const expectation = target.kind === 'etcd' && step.etcd34 !== undefined ? step.etcd34 : step.expect;
      const problem = checkGrpcExpectation(outcome, expectation);
      if (problem !== undefined) failures.push(`step ${index} (${step.label}): ${problem}`);
    }
  } finally {
    client.close();
  }
  return { records, failures };
}

function credentialsFor(step: { token?: string; literalToken?: string; bearer?: string }, tokens: Map<string, string>): CallOptions {
  const saved = (name: string): string => {
    const token = tokens.get(name);
    if (token === undefined) throw new TypeError(`grpc scenario: no saved token ${name}`);
    return token;
  };
  if (step.literalToken !== undefined) return { token: step.literalToken };
  if (step.bearer !== undefined) return { authorization: `Bearer ${saved(step.bearer)}` };
  if (step.token !== undefined) return { token: saved(step.token) };
  return {};
}

async function callStep(
  client: EtcdGrpcClient,
  step: GrpcCallStep,
  tokens: Map<string, string>,
  baselineRevision: number,
): Promise<GrpcOutcome<unknown>> {
  const request = typeof step.request === 'function' ? step.request({ baselineRevision }) : { ...step.request };
  const outcome = await client.call<Record<string, unknown>>(step.service, step.method, request, credentialsFor(step, tokens));
  if (step.save !== undefined && outcome.ok && typeof outcome.response.token === 'string') tokens.set(step.save, outcome.response.token);
  return outcome;
}

function jwtClaims(step: GrpcJwtClaimsStep, tokens: Map<string, string>): GrpcOutcome<unknown> {
  const claims = (name: string): { username?: unknown; revision?: unknown; exp?: unknown } => {
    const token = tokens.get(name);
    if (token === undefined) throw new TypeError(`grpc scenario: no saved token ${name}`);
    const payload = token.split('.')[1];
    if (payload === undefined) throw new TypeError(`grpc scenario: token ${name} is not a JWT`);
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { username?: unknown; revision?: unknown; exp?: unknown };
  };
  const of = claims(step.jwtClaimsOf);
  const base = claims(step.relativeTo);
  return {
    ok: true,
    response: { username: of.username, revisionDelta: Number(of.revision) - Number(base.revision), hasExp: typeof of.exp === 'number' },
  };
}

async function watchCreate(client: EtcdGrpcClient, step: GrpcWatchStep, tokens: Map<string, string>): Promise<GrpcOutcome<unknown>> {
  const stream = client.watch(credentialsFor(step, tokens));
  try {
    return await new Promise<GrpcOutcome<unknown>>((resolvePromise) => {
      const timer = setTimeout(() => resolvePromise({ ok: false, code: -1, details: 'no watch answer' }), WATCH_ANSWER_TIMEOUT_MS);
      stream.once('data', (response: Record<string, unknown>) => {
        clearTimeout(timer);
        resolvePromise({ ok: true, response });
      });
      stream.once('error', (error: { code?: number; details?: string }) => {
        clearTimeout(timer);
        resolvePromise({ ok: false, code: error.code ?? -1, details: error.details ?? String(error) });
      });
      stream.write({ create_request: { ...step.watchCreate } });
    });
  } finally {
    stream.cancel();
    stream.on('error', () => undefined);
  }
}

const REVISION_KEYS = new Set(['revision', 'create_revision', 'mod_revision', 'compact_revision']);

/** Strips response headers, shows bytes as text, classifies tokens, makes revisions relative and sorts lease lists. */
export function normalizeValue(value: unknown, baselineRevision: number, key = ''): unknown {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (Array.isArray(value)) return value.map((item) => normalizeValue(item, baselineRevision));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [field, inner] of Object.entries(value)) {
      if (field === 'header') continue;
      out[field] = normalizeValue(inner, baselineRevision, field);
      // etcd lists leases in map order (random): compare them sorted by ID.
      if (field === 'leases' && Array.isArray(out[field])) out[field] = (out[field] as Array<{ ID?: string }>).slice().sort((a, b) => compareIds(a.ID, b.ID));
    }
    return out;
  }
  if (key === 'token' && typeof value === 'string') return tokenShape(value);
  if (REVISION_KEYS.has(key) && typeof value === 'string' && /^\d+$/.test(value) && value !== '0') {
    return `base+${Number(value) - baselineRevision}`;
  }
  return value;
}

function compareIds(a: string | undefined, b: string | undefined): number {
  const x = BigInt(a ?? '0');
  const y = BigInt(b ?? '0');
  return x < y ? -1 : x > y ? 1 : 0;
}

function tokenShape(token: string): string {
  if (/^[a-zA-Z]{16}\.\d+$/.test(token)) return '<simple-token>';
  if (/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) return '<jwt>';
  return `<other-token:${token.length}>`;
}

function normalizeOutcome(outcome: GrpcOutcome<unknown>, baselineRevision: number): GrpcOutcome<unknown> {
  return outcome.ok ? { ok: true, response: normalizeValue(outcome.response, baselineRevision) } : outcome;
}

/** Returns a description of the mismatch, or undefined when the outcome meets the expectation. */
export function checkGrpcExpectation(outcome: GrpcOutcome<unknown>, expectation: GrpcExpectation): string | undefined {
  if ('code' in expectation) {
    if (outcome.ok) return `succeeded (${JSON.stringify(outcome.response)}), expected code ${expectation.code} ${expectation.details}`;
    if (outcome.code !== expectation.code || outcome.details !== expectation.details) {
      return `code ${outcome.code} ${JSON.stringify(outcome.details)}, expected code ${expectation.code} ${JSON.stringify(expectation.details)}`;
    }
    return undefined;
  }
  if (!outcome.ok) return `failed with code ${outcome.code} ${JSON.stringify(outcome.details)}, expected success`;
  if (expectation.response !== undefined && !containsSubset(outcome.response, expectation.response)) {
    return `response ${JSON.stringify(outcome.response)} does not contain ${JSON.stringify(expectation.response)}`;
  }
  return undefined;
}

function containsSubset(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((item, i) => containsSubset(actual[i], item));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') return false;
    return Object.entries(expected).every(([key, value]) => containsSubset((actual as Record<string, unknown>)[key], value));
  }
  return Object.is(actual, expected);
}
