import { resetTarget, setupAuth, type RoleSpec, type UserSpec } from './auth-setup';
import { EtcdGrpcClient } from './grpc-client';
import type { Target } from './target';

/** HTTP status and a subset of the (normalised) JSON body. */
export interface HttpExpectation {
  readonly status: number;
  readonly body?: Readonly<Record<string, unknown>>;
  /** The body exactly as text (for non-JSON answers such as etcd 3.4's `Not Found`). */
  readonly text?: string;
}

/** One `POST <jsonGatewayUrl><path>` with a JSON body. */
export interface HttpStep {
  readonly label: string;
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
  /** Saved token sent as `Authorization: <token>` (etcd's gateway form). */
  readonly token?: string;
  /** Saved token sent as `Authorization: Bearer <token>`. */
  readonly bearer?: string;
  readonly literalAuthorization?: string;
  /** Save `body.token` of the answer under this name. */
  readonly save?: string;
  readonly expect: HttpExpectation;
  /** Debian's etcd 3.4.23 answer where it knowingly differs (spec §8.2). */
  readonly etcd34?: HttpExpectation;
}

export interface HttpScenario {
  readonly name: string;
  readonly spec: string;
  readonly setup?: { readonly roles?: readonly RoleSpec[]; readonly users?: readonly UserSpec[] };
  readonly steps: readonly HttpStep[];
}

export interface HttpStepRecord {
  readonly step: number;
  readonly label: string;
  readonly differs: boolean;
  readonly status: number;
  readonly body: unknown;
}

const HTTP_TIMEOUT_MS = 15_000;
const REVISION_KEYS = new Set(['revision', 'create_revision', 'mod_revision', 'compact_revision']);

/** Runs an HTTP scenario against a target's JSON gateway from a reset state. */
export async function runHttpScenario(target: Target, scenario: HttpScenario): Promise<{ records: HttpStepRecord[]; failures: string[] }> {
  const client = new EtcdGrpcClient(target.clientEndpoint);
  let baselineRevision: number;
  try {
    baselineRevision = await resetTarget(client);
    if (scenario.setup) await setupAuth(client, scenario.setup);
  } finally {
    client.close();
  }
  const tokens = new Map<string, string>();
  const records: HttpStepRecord[] = [];
  const failures: string[] = [];
  for (const [index, step] of scenario.steps.entries()) {
    const response = await fetch(`${target.jsonGatewayUrl}${step.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authorization(step, tokens) },
      body: JSON.stringify(step.body),
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    if (step.save !== undefined && typeof (parsed as { token?: unknown }).token === 'string') {
      tokens.set(step.save, (parsed as { token: string }).token);
    }
    const body = normalizeJson(parsed, baselineRevision);
    records.push({ step: index, label: step.label, differs: step.etcd34 !== undefined, status: response.status, body });
    const expectation = target.kind === 'etcd' && step.etcd34 !== undefined ? step.etcd34 : step.expect;
    const problem = checkHttp(response.status, body, expectation);
    if (problem !== undefined) failures.push(`step ${index} (${step.label}): ${problem}`);
  }
  return { records, failures };
}

function authorization(step: HttpStep, tokens: Map<string, string>): Record<string, string> {
  const saved = (name: string): string => {
    const token = tokens.get(name);
    if (token === undefined) throw new TypeError(`http scenario: no saved token ${name}`);
    return token;
  };
  if (step.literalAuthorization !== undefined) return { authorization: step.literalAuthorization };
  if (step.bearer !== undefined) return { authorization: `Bearer ${saved(step.bearer)}` };
  if (step.token !== undefined) return { authorization: saved(step.token) };
  return {};
}

function normalizeJson(value: unknown, baselineRevision: number, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => normalizeJson(item, baselineRevision));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [field, inner] of Object.entries(value)) {
      if (field === 'header') continue;
      out[field] = normalizeJson(inner, baselineRevision, field);
    }
    return out;
  }
  if (key === 'token' && typeof value === 'string') return /^[a-zA-Z]{16}\.\d+$/.test(value) ? '<simple-token>' : '<token>';
  if (REVISION_KEYS.has(key) && typeof value === 'string' && /^\d+$/.test(value)) return `base+${Number(value) - baselineRevision}`;
  return value;
}

function checkHttp(status: number, body: unknown, expectation: HttpExpectation): string | undefined {
  if (status !== expectation.status) return `status ${status} (${JSON.stringify(body)}), expected ${expectation.status}`;
  if (expectation.text !== undefined && body !== expectation.text) return `body ${JSON.stringify(body)}, expected ${JSON.stringify(expectation.text)}`;
  if (expectation.body !== undefined) {
    const actual = body as Record<string, unknown>;
    for (const [field, value] of Object.entries(expectation.body)) {
      if (JSON.stringify(actual?.[field]) !== JSON.stringify(value)) {
        return `body ${JSON.stringify(body)}: ${field} should be ${JSON.stringify(value)}`;
      }
    }
  }
  return undefined;
}
