/**
 * `ward-mesh compile`: the Envoy configuration istiod would send one workload's sidecar for
 * inbound traffic — the authorization filters (HTTP and TCP) and the `virtualInbound` listener —
 * as YAML in istiod's golden format or as JSON. Invalid inputs are not compiled.
 */
import { compileWorkload, toGoYaml } from '@ward/mesh/compiler';
import type { CompileResult } from '@ward/mesh/compiler';
import type { Diagnostic } from '@ward/mesh/istio-api';
import type { SourceText } from '../cli/read-inputs';
import { EXIT } from './command-result';
import type { CommandResult, OutputFormat } from './command-result';
import { formatFinding, loadPolicyInputs, locateCompilerDiagnostic, meshFromFlags, parsePorts, workloadFromFlags } from './policy-inputs';
import type { LocatedFinding } from './policy-inputs';

export interface CompileCommandOptions {
  readonly output: OutputFormat;
  readonly workload: { readonly namespace: string; readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly defaultNamespace: string;
  /** Raw flag values (`--ports`, `--root-namespace`, `--trust-domain`, `--trust-domain-aliases`). */
  readonly flags: Readonly<Record<string, unknown>>;
}

function findingsText(findings: readonly LocatedFinding[]): string {
  const shown = findings.filter((finding) => finding.severity !== 'info');
  return shown.length === 0 ? '' : `${shown.map(formatFinding).join('\n')}\n`;
}

function document(result: CompileResult, findings: readonly LocatedFinding[]) {
  const config = result.config;
  return {
    ok: result.ok,
    ...(config === undefined
      ? {}
      : {
          workload: config.workload,
          mtls: config.mtls,
          policies: config.policies,
          httpFilters: config.httpFilters,
          networkFilters: config.networkFilters,
          listener: config.listener,
        }),
    diagnostics: findings,
  };
}

/** Compiles the policies of `sources` for the workload of the options. */
export function runCompile(sources: readonly SourceText[], problems: readonly Diagnostic[], options: CompileCommandOptions): CommandResult {
  const ports = parsePorts(typeof options.flags['ports'] === 'string' ? options.flags['ports'] : undefined);
  const mesh = meshFromFlags(options.flags);
  if (typeof ports === 'string' || typeof mesh === 'string') {
    return { stdout: '', stderr: `ward-mesh: ${typeof ports === 'string' ? ports : mesh}\n`, exitCode: EXIT.usage };
  }
  const inputs = loadPolicyInputs(sources, problems, options.defaultNamespace);
  if (inputs.findings.some((finding) => finding.severity === 'error')) {
    return { stdout: '', stderr: `${findingsText(inputs.findings)}ward-mesh: not compiled: the inputs have errors\n`, exitCode: EXIT.failed };
  }
  const result = compileWorkload({
    workload: workloadFromFlags(options.workload, ports),
    mesh,
    authorizationPolicies: inputs.authorizationPolicies,
    peerAuthentications: inputs.peerAuthentications,
    options: { defaultNamespace: options.defaultNamespace },
  });
  const findings = [...inputs.findings, ...result.diagnostics.map((d) => locateCompilerDiagnostic(d, inputs.loaded, options.defaultNamespace))];
  const body = document(result, findings);
  const stdout = options.output === 'json' ? `${JSON.stringify(body, null, 2)}\n` : toGoYaml(body);
  const exitCode = result.ok ? EXIT.ok : EXIT.failed;
  const trailer = result.ok ? '' : 'ward-mesh: some rules could not be translated faithfully; the output fails closed there\n';
  return { stdout: result.config === undefined && !result.ok ? '' : stdout, stderr: `${findingsText(findings)}${trailer}`, exitCode };
}
