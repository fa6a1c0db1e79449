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
import { meshConfigHint, resolveMesh } from './mesh-settings';
import { formatFinding, loadPolicyInputs, locateCompilerDiagnostic, meshFromFlags, parsePorts, workloadFromFlags } from './policy-inputs';
import type { LocatedFinding } from './policy-inputs';

export interface CompileCommandOptions {
  readonly output: OutputFormat;
  readonly workload: Workload;
  /** Mesh settings given explicitly (flags, HTTP `mesh`); they override the MeshConfig file. */
  readonly mesh: Partial<MeshSettings>;
  /** The MeshConfig file (`--mesh-config`), already read. */
  readonly meshConfig?: SourceText;
  readonly defaultNamespace: string;
}

/** Loads the inputs and the mesh config and compiles, or says why not (findings with errors). */
export function compileInputs(sources: readonly SourceText[], problems: readonly Diagnostic[], options: CompileCommandOptions) {
  const resolved = resolveMesh(options.meshConfig, options.mesh);
  const inputs = loadPolicyInputs(sources, problems, options.defaultNamespace);
  const findings = [...resolved.findings, ...inputs.findings];
  if (findings.some((finding) => finding.severity === 'error')) return { findings, compiled: undefined };
  const compiled = compileWorkload({
    workload: options.workload,
    mesh: resolved.mesh,
    services: resolved.services,
    authorizationPolicies: inputs.authorizationPolicies,
    peerAuthentications: inputs.peerAuthentications,
    options: { defaultNamespace: options.defaultNamespace },
  });
  return { findings: [...findings, ...compiled.diagnostics.map((d) => locateCompilerDiagnostic(d, inputs.loaded, options.defaultNamespace))], compiled };
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
  const { findings, compiled: result } = compileInputs(sources, problems, options);
  if (result === undefined) return { exitCode: EXIT.failed, findings };
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
  meshConfig?: SourceText,
): CompileCommandOptions | string {
  const ports = parsePorts(typeof flags['ports'] === 'string' ? flags['ports'] : undefined);
  if (typeof ports === 'string') return ports;
  const mesh = meshFromFlags(flags);
  if (typeof mesh === 'string') return mesh;
  return { output, workload: workloadFromFlags(workload, ports), mesh, ...(meshConfig !== undefined ? { meshConfig } : {}), defaultNamespace };
}

/** Compiles the policies of `sources` for the workload of the options and renders the result. */
export function runCompile(sources: readonly SourceText[], problems: readonly Diagnostic[], options: CompileCommandOptions): CommandResult {
  const evaluation = evaluateCompile(sources, problems, options);
  const notes = `${findingsText(evaluation.findings)}${meshConfigHint(evaluation.findings, options.meshConfig)}`;
  if (evaluation.document === undefined) {
    return { stdout: '', stderr: `${notes}ward-mesh: not compiled: the inputs have errors\n`, exitCode: evaluation.exitCode };
  }
  const stdout = options.output === 'json' ? `${JSON.stringify(evaluation.document, null, 2)}\n` : toGoYaml(evaluation.document);
  const trailer = evaluation.exitCode === EXIT.ok ? '' : 'ward-mesh: some rules could not be translated faithfully; the output fails closed there\n';
  return { stdout, stderr: `${notes}${trailer}`, exitCode: evaluation.exitCode };
}
