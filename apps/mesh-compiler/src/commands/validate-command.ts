/**
 * `ward-mesh validate`: istioctl validate's checks and output, plus file/line/field locations,
 * the CRD schema checks and, on request, istioctl analyze's messages and ward's advice.
 */
import {
  analyzeResources,
  formatValidateText,
  istioctlAnalyzeLine,
  loadResources,
  validateResources,
} from '@ward/mesh/istio-api';
import type { Diagnostic, InputReport, LoadedResource } from '@ward/mesh/istio-api';
import { stringify } from 'yaml';
import type { SourceText } from '../cli/read-inputs';
import { EXIT } from './command-result';
import type { CommandResult, OutputFormat } from './command-result';

export interface ValidateCommandOptions {
  readonly output: OutputFormat;
  /** Warnings fail the run (for CI pipelines). */
  readonly strict: boolean;
  /** Print istioctl analyze messages (IST codes) instead of istioctl validate's report. */
  readonly analyze: boolean;
  /** Add ward's advisory warnings. */
  readonly advice: boolean;
  /** Exact istioctl text, without ward's locations. */
  readonly compat: boolean;
  /** Namespace for resources without one (istioctl: `-n`, default `default`). */
  readonly defaultNamespace: string;
  readonly rootNamespace: string;
}

interface InputResult {
  readonly report: InputReport;
  readonly resources: readonly LoadedResource[];
}

function loadAll(sources: readonly SourceText[], options: ValidateCommandOptions): InputResult[] {
  return sources.map((source) => {
    const loaded = loadResources(source.text, { sourceName: source.sourceName });
    const validated = options.analyze
      ? []
      : validateResources(loaded.resources, { defaultNamespace: options.defaultNamespace, advice: options.advice });
    return { report: { sourceName: source.sourceName, diagnostics: [...loaded.diagnostics, ...validated] }, resources: loaded.resources };
  });
}

function withAnalysis(results: readonly InputResult[], options: ValidateCommandOptions): InputResult[] {
  const all = results.flatMap((result) => result.resources);
  const analysis = analyzeResources(all, { rootNamespace: options.rootNamespace, defaultNamespace: options.defaultNamespace });
  return results.map(({ report, resources }) => ({
    resources,
    report: {
      sourceName: report.sourceName,
      diagnostics: [...report.diagnostics, ...analysis.filter((diagnostic) => diagnostic.sourceName === report.sourceName)],
    },
  }));
}

function failed(results: readonly InputResult[], strict: boolean): boolean {
  const all = results.flatMap((result) => result.report.diagnostics);
  return all.some((d) => d.severity === 'error') || (strict && all.some((d) => d.severity === 'warning'));
}

function structured(results: readonly InputResult[], exitCode: number) {
  return {
    valid: exitCode === EXIT.ok,
    exitCode,
    inputs: results.map(({ report, resources }) => ({
      source: report.sourceName,
      resources: resources.map(({ resource, origin }) => ({
        kind: resource.kind,
        namespace: resource.metadata.namespace,
        name: resource.metadata.name,
        line: origin.position.line,
      })),
      diagnostics: report.diagnostics,
    })),
  };
}

function analyzeText(results: readonly InputResult[]): string {
  const lines = results.flatMap(({ report }) => report.diagnostics.filter((d) => d.severity !== 'info').map(istioctlAnalyzeLine));
  return lines.length === 0 ? 'No validation issues found when analyzing the given inputs.\n' : `${lines.join('\n')}\n`;
}

/** The outcome of validating a set of inputs, before it is rendered. */
export interface ValidateEvaluation {
  readonly results: readonly InputResult[];
  readonly exitCode: number;
}

/** Validates already-read inputs; `problems` are inputs that could not be read. */
export function evaluateValidate(sources: readonly SourceText[], problems: readonly Diagnostic[], options: ValidateCommandOptions): ValidateEvaluation {
  const loaded = loadAll(sources, options);
  const unreadable: InputResult[] = problems.map((problem) => ({ report: { sourceName: problem.sourceName, diagnostics: [problem] }, resources: [] }));
  const results = [...unreadable, ...(options.analyze ? withAnalysis(loaded, options) : loaded)];
  return { results, exitCode: failed(results, options.strict) ? EXIT.failed : EXIT.ok };
}

/** The report as plain data (the JSON/YAML output and the HTTP answer). */
export function validateReport(evaluation: ValidateEvaluation) {
  return structured(evaluation.results, evaluation.exitCode);
}

/** The text istioctl would print (or istioctl analyze's lines with `analyze`). */
export function validateText(evaluation: ValidateEvaluation, options: ValidateCommandOptions): string {
  if (options.analyze) return analyzeText(evaluation.results);
  return formatValidateText(
    evaluation.results.map((result) => result.report),
    { locations: !options.compat, strict: options.strict },
  ).text;
}

/** Runs validate and renders it in the requested format. */
export function runValidate(sources: readonly SourceText[], problems: readonly Diagnostic[], options: ValidateCommandOptions): CommandResult {
  const evaluation = evaluateValidate(sources, problems, options);
  const { exitCode } = evaluation;
  if (options.output === 'json') return { stdout: `${JSON.stringify(validateReport(evaluation), null, 2)}\n`, stderr: '', exitCode };
  if (options.output === 'yaml') return { stdout: stringify(validateReport(evaluation)), stderr: '', exitCode };
  const text = validateText(evaluation, options);
  // istioctl prints its `Error:` report on stderr; a passing report goes to stdout here.
  return exitCode === EXIT.failed && !options.analyze ? { stdout: '', stderr: text, exitCode } : { stdout: text, stderr: '', exitCode };
}
