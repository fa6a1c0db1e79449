/**
 * `ward-mesh compile`: the Envoy configuration istiod would send one workload's sidecar for
 * inbound traffic — the authorization filters (HTTP and TCP) and the `virtualInbound` listener —
 * as YAML in istiod's golden format or as JSON. Invalid inputs are not compiled.
 */
import { compileWorkload, toGoYaml } from '@ward/mesh/compiler';
import type { MeshSettings, Workload } from '@ward/mesh/compiler';
import type { Diagnostic } from '@ward/mesh/istio-api';
import type { SourceText } from '../cli/read-inputs';
import { EXIT } from './command-result';
import type { CommandResult, OutputFormat } from './command-result';
import { formatFinding, loadPolicyInputs, locateCompilerDiagnostic, meshFromFlags, parsePorts, workloadFromFlags } from './policy-inputs';
import type { LocatedFinding } from './policy-inputs';

export interface CompileCommandOptions {
  readonly output: OutputFormat;
  readonly workload: Workload;
  readonly mesh: Partial<MeshSettings>;
  readonly defaultNamespace: string;
}

function findingsText(findings: readonly LocatedFinding[]): string {
  const shown = findings.filter((finding) => finding.severity !== 'info');
  return shown.length === 0 ? '' : `${shown.map(formatFinding).join('\n')}\n`;
}

/** The compiled configuration and every finding, as plain data. */
export interface CompileEvaluation {
  readonly exitCode: number;
  /** Present unless the inputs had errors (nothing was compiled). */
  readonly document?: Record<string, unknown>;
  readonly findings: readonly LocatedFinding[];
}

/** Loads, validates and compiles; invalid inputs are not compiled. */
export function evaluateCompile(sources: readonly SourceText[], problems: readonly Diagnostic[], options: CompileCommandOptions): CompileEvaluation {
  const inputs = loadPolicyInputs(sources, problems, options.defaultNamespace);
  if (inputs.findings.some((finding) => finding.severity === 'error')) return { exitCode: EXIT.failed, findings: inputs.findings };
  const result = compileWorkload({
    workload: options.workload,
    mesh: options.mesh,
    authorizationPolicies: inputs.authorizationPolicies,
    peerAuthentications: inputs.peerAuthentications,
    options: { defaultNamespace: options.defaultNamespace },
  });
  const findings = [...inputs.findings, ...result.diagnostics.map((d) => locateCompilerDiagnostic(d, inputs.loaded, options.defaultNamespace))];
  const config = result.config;
  const exitCode = result.ok ? EXIT.ok : EXIT.failed;
  if (config === undefined) return { exitCode, findings };
  const document = {
    ok: result.ok,
    workload: config.workload,
    mtls: config.mtls,
    policies: config.policies,
    httpFilters: config.httpFilters,
    networkFilters: config.networkFilters,
    listener: config.listener,
    diagnostics: findings,
  };
  return { exitCode, document, findings };
}

/** Builds the compile options from command-line flags, or a usage message. */
export function compileOptionsFromFlags(
  workload: { namespace: string; name: string; labels: Readonly<Record<string, string>> },
  flags: Readonly<Record<string, unknown>>,
  output: OutputFormat,
  defaultNamespace: string,
): CompileCommandOptions | string {
  const ports = parsePorts(typeof flags['ports'] === 'string' ? flags['ports'] : undefined);
  if (typeof ports === 'string') return ports;
  const mesh = meshFromFlags(flags);
  if (typeof mesh === 'string') return mesh;
  return { output, workload: workloadFromFlags(workload, ports), mesh, defaultNamespace };
}

/** Compiles the policies of `sources` for the workload of the options and renders the result. */
export function runCompile(sources: readonly SourceText[], problems: readonly Diagnostic[], options: CompileCommandOptions): CommandResult {
  const evaluation = evaluateCompile(sources, problems, options);
  const notes = findingsText(evaluation.findings);
  if (evaluation.document === undefined) {
    return { stdout: '', stderr: `${notes}ward-mesh: not compiled: the inputs have errors\n`, exitCode: evaluation.exitCode };
  }
  const stdout = options.output === 'json' ? `${JSON.stringify(evaluation.document, null, 2)}\n` : toGoYaml(evaluation.document);
  const trailer = evaluation.exitCode === EXIT.ok ? '' : 'ward-mesh: some rules could not be translated faithfully; the output fails closed there\n';
  return { stdout, stderr: `${notes}${trailer}`, exitCode: evaluation.exitCode };
}
