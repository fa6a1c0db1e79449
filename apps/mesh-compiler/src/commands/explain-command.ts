/**
 * `ward-mesh explain`: compiles the workload, then simulates one request or connection against
 * the compiled listener and says what happens — allowed, 403, closed or reset — which filter
 * and which policy rule decided, and which stats and metadata Envoy records.
 */
import { SimulatorError, protocolClass, simulate, toGoYaml } from '@ward/mesh/compiler';
import type { ClientTransport, SimulatedTraffic, SimulationResult, Workload } from '@ward/mesh/compiler';
import type { Diagnostic } from '@ward/mesh/istio-api';
import type { SourceText } from '../cli/read-inputs';
import { EXIT } from './command-result';
import type { CommandResult } from './command-result';
import { compileInputs } from './compile-command';
import type { CompileCommandOptions } from './compile-command';
import { meshConfigHint } from './mesh-settings';
import { formatFinding } from './policy-inputs';
import type { LocatedFinding } from './policy-inputs';

/** What a CI pipeline can require of a decision (`--expect`). */
export const EXPECTATIONS = ['allow', 'deny', 'reset'] as const;
export type Expectation = (typeof EXPECTATIONS)[number];

export interface ExplainCommandOptions extends CompileCommandOptions {
  readonly traffic: SimulatedTraffic;
  /** Exit 1 unless the decision is this one. */
  readonly expect?: Expectation;
}

/**
 * The decision class of an outcome: `allow` (reached the application), `deny` (403 or a
 * connection closed by an authorization filter), `reset` (closed before any filter ran: no
 * filter chain, a failed mTLS handshake, bytes the chain cannot parse).
 */
export function decisionOf(outcome: SimulationResult['outcome']): Expectation {
  if (outcome === 'allowed') return 'allow';
  return outcome === 'denied' ? 'deny' : 'reset';
}

/** An `--expect` check: what was expected, what happened, whether they agree. */
export interface ExpectationCheck {
  readonly expected: Expectation;
  readonly actual: Expectation;
  readonly outcome: SimulationResult['outcome'];
  readonly matched: boolean;
}

const TRANSPORTS: readonly ClientTransport[] = ['mtls', 'tls', 'plaintext'];
const MAX_HEADERS = 64;

function headerPairs(values: unknown): Record<string, string> | string {
  const headers: Record<string, string> = {};
  const list = Array.isArray(values) ? (values as string[]) : [];
  if (list.length > MAX_HEADERS) return `--header: at most ${MAX_HEADERS} headers`;
  for (const pair of list) {
    const colon = pair.search(/[=:]/);
    if (colon <= 0) return `--header: expected name=value, got ${JSON.stringify(pair)}`;
    headers[pair.slice(0, colon).trim().toLowerCase()] = pair.slice(colon + 1).trim();
  }
  return headers;
}

function portOf(flags: Readonly<Record<string, unknown>>, workload: Workload): number | string {
  const text = flags['port'];
  if (typeof text !== 'string') {
    const first = workload.ports[0];
    return first === undefined ? '--port is needed when the workload declares no --ports' : first.port;
  }
  const port = Number(text);
  return /^\d{1,5}$/.test(text) && port >= 1 && port <= 65535 ? port : `--port: expected 1..65535, got ${JSON.stringify(text)}`;
}

function wantsHttp(flags: Readonly<Record<string, unknown>>, workload: Workload, port: number): boolean {
  if (['method', 'path', 'host', 'request-principal', 'header'].some((name) => flags[name] !== undefined)) return true;
  const declared = workload.ports.find((candidate) => candidate.port === port);
  return declared === undefined || protocolClass(declared.protocol) !== 'TCP';
}

/** The simulated traffic of the explain flags, or a usage message. */
export function trafficFromFlags(flags: Readonly<Record<string, unknown>>, workload: Workload): SimulatedTraffic | string {
  const port = portOf(flags, workload);
  if (typeof port === 'string') return port;
  const transport = (flags['tls'] ?? 'mtls') as ClientTransport;
  if (!TRANSPORTS.includes(transport)) return `--tls: expected mtls, tls or plaintext, got ${JSON.stringify(flags['tls'])}`;
  const headers = headerPairs(flags['header']);
  if (typeof headers === 'string') return headers;
  const text = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const path = text('path') ?? '/';
  if (!path.startsWith('/')) return `--path: must start with /, got ${JSON.stringify(path)}`;
  const requestPrincipal = text('request-principal');
  const http = wantsHttp(flags, workload, port)
    ? {
        method: text('method') ?? 'GET',
        path,
        host: text('host') ?? `${workload.name ?? 'workload'}.${workload.namespace}.svc.cluster.local`,
        headers,
        ...(requestPrincipal === undefined ? {} : { requestPrincipal }),
      }
    : undefined;
  const extAuthz = text('ext-authz');
  if (extAuthz !== undefined && extAuthz !== 'allow' && extAuthz !== 'deny') return `--ext-authz: expected allow or deny, got ${JSON.stringify(extAuthz)}`;
  const optional = (name: string, key: keyof SimulatedTraffic) => (text(name) === undefined ? {} : { [key]: text(name) });
  return { port, transport, ...optional('ext-authz', 'extAuthz'), ...optional('source-principal', 'sourcePrincipal'), ...optional('source-ip', 'sourceIp'), ...optional('remote-ip', 'remoteIp'), ...optional('sni', 'sni'), ...(http === undefined ? {} : { http }) };
}

function describeTraffic(traffic: SimulatedTraffic): string {
  const who = traffic.transport === 'mtls' ? ` as ${traffic.sourcePrincipal ?? 'cluster.local/ns/default/sa/default'}` : '';
  const request = traffic.http === undefined ? 'a TCP connection' : `${traffic.http.method} ${traffic.http.path} (Host: ${traffic.http.host})`;
  return `${request} over ${traffic.transport} to port ${traffic.port}${who}`;
}

function verdictText(verdict: { allowed: boolean; matchedPolicy?: string } | undefined): string {
  if (verdict === undefined) return '';
  return `${verdict.allowed ? 'allowed' : 'denied'}${verdict.matchedPolicy === undefined ? ' (no policy matched)' : ` (matched ${verdict.matchedPolicy})`}`;
}

/** A human explanation of one simulation. */
export function explanationText(traffic: SimulatedTraffic, result: SimulationResult): string {
  const lines = [`${result.outcome.toUpperCase()}: ${describeTraffic(traffic)}`];
  const chain = result.chain;
  lines.push(chain === undefined ? '  filter chain: none matched' : `  filter chain: [${chain.index}] ${chain.name} (${chain.kind}${chain.mtls ? ', mTLS' : ''})`);
  if (result.peerPrincipal !== undefined) lines.push(`  peer principal: ${result.peerPrincipal}`);
  for (const filter of result.filters) {
    const parts = [filter.action ?? '', filter.enforced === undefined ? '' : `rules ${verdictText(filter.enforced)}`, filter.shadow === undefined ? '' : `shadow rules ${verdictText(filter.shadow)} [${filter.shadow.statPrefix}]`];
    const extAuthz = filter.extAuthz === undefined ? '' : `ext_authz ${filter.extAuthz.enabled ? `called: ${filter.extAuthz.decision ?? 'n/a'}` : 'not enabled'}`;
    lines.push(`  [${filter.index}] ${filter.name} ${[...parts, extAuthz].filter((part) => part !== '').join('; ')}${filter.stopped ? ' -> stopped here' : ''}`);
  }
  const decision = result.decision;
  const by = decision.filterName === undefined ? '' : ` (filter [${decision.filterIndex}] ${decision.filterName}${decision.policy === undefined ? '' : `, policy ${decision.policy}`})`;
  lines.push(`  decision: ${decision.reason}${by}`);
  if (result.httpResponse !== undefined) lines.push(`  response: ${result.httpResponse.status} ${JSON.stringify(result.httpResponse.body)} (${result.httpResponse.responseCodeDetails})`);
  if (result.connectionTerminationDetails !== undefined) lines.push(`  connection: closed (${result.connectionTerminationDetails})`);
  if (result.stats.length > 0) lines.push(`  stats: ${result.stats.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

function findingsText(findings: readonly LocatedFinding[]): string {
  const shown = findings.filter((finding) => finding.severity !== 'info');
  return shown.length === 0 ? '' : `${shown.map(formatFinding).join('\n')}\n`;
}

/** The simulation and every finding, as plain data. */
export interface ExplainEvaluation {
  readonly exitCode: number;
  readonly traffic: SimulatedTraffic;
  readonly result?: SimulationResult;
  /** Present with `expect` once there is a result. */
  readonly expectation?: ExpectationCheck;
  readonly findings: readonly LocatedFinding[];
  /** Why there is no result (invalid inputs, or traffic the simulator cannot evaluate). */
  readonly failure?: string;
}

/** Loads, validates, compiles and simulates. */
export function evaluateExplain(sources: readonly SourceText[], problems: readonly Diagnostic[], options: ExplainCommandOptions): ExplainEvaluation {
  const base = { traffic: options.traffic };
  const { findings, compiled } = compileInputs(sources, problems, options);
  if (compiled === undefined) return { ...base, exitCode: EXIT.failed, findings, failure: 'not explained: the inputs have errors' };
  if (compiled.config === undefined) return { ...base, exitCode: EXIT.failed, findings, failure: 'not explained: the workload could not be compiled' };
  try {
    const result = simulate(compiled.config, options.traffic);
    const expectation = options.expect === undefined ? undefined : checkExpectation(options.expect, result);
    const exitCode = compiled.ok && expectation?.matched !== false ? EXIT.ok : EXIT.failed;
    return { ...base, exitCode, result, findings, ...(expectation !== undefined ? { expectation } : {}) };
  } catch (error) {
    if (error instanceof SimulatorError) return { ...base, exitCode: EXIT.failed, findings, failure: `not explained: ${error.message} (${error.detail})` };
    throw error;
  }
}

function checkExpectation(expected: Expectation, result: SimulationResult): ExpectationCheck {
  const actual = decisionOf(result.outcome);
  return { expected, actual, outcome: result.outcome, matched: actual === expected };
}

/** The stderr verdict of an `--expect` check, and why a matched decision still fails. */
export function expectationText(evaluation: ExplainEvaluation): string {
  const check = evaluation.expectation;
  if (check === undefined) return '';
  if (!check.matched) return `ward-mesh: expected ${check.expected}, but the decision is ${check.actual} (${check.outcome})\n`;
  if (evaluation.exitCode !== EXIT.ok) return `ward-mesh: the decision is ${check.actual} as expected, but some rules could not be translated faithfully (see the errors above)\n`;
  return '';
}

/** Runs explain and renders it. */
export function runExplain(sources: readonly SourceText[], problems: readonly Diagnostic[], options: ExplainCommandOptions): CommandResult {
  const evaluation = evaluateExplain(sources, problems, options);
  const notes = `${findingsText(evaluation.findings)}${meshConfigHint(evaluation.findings, options.meshConfig)}${expectationText(evaluation)}`;
  if (evaluation.result === undefined) return { stdout: '', stderr: `${notes}ward-mesh: ${evaluation.failure ?? 'not explained'}\n`, exitCode: evaluation.exitCode };
  const document = {
    traffic: evaluation.traffic,
    result: evaluation.result,
    ...(evaluation.expectation !== undefined ? { expectation: evaluation.expectation } : {}),
    diagnostics: evaluation.findings,
  };
  if (options.output === 'json') return { stdout: `${JSON.stringify(document, null, 2)}\n`, stderr: notes, exitCode: evaluation.exitCode };
  if (options.output === 'yaml') return { stdout: toGoYaml(document), stderr: notes, exitCode: evaluation.exitCode };
  return { stdout: explanationText(evaluation.traffic, evaluation.result), stderr: notes, exitCode: evaluation.exitCode };
}
