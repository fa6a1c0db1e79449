/**
 * Renders diagnostics the way `istioctl validate` and `istioctl analyze` print them, optionally
 * followed by the location (file, line, field path) that istioctl does not show.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';

/** The findings of one input (a file, or `-` for stdin). */
export interface InputReport {
  readonly sourceName: string;
  readonly diagnostics: readonly Diagnostic[];
}

export interface ValidateTextOptions {
  /** Append ` (at <file>:<line>, <path>)` to each finding. Default true. */
  readonly locations?: boolean;
  /** Treat warnings as failures (`--strict`). Default false. */
  readonly strict?: boolean;
}

export interface ValidateText {
  readonly text: string;
  /** True when istioctl would exit non-zero (or, with `strict`, when there are warnings). */
  readonly failed: boolean;
}

/** Load codes whose istioctl counterpart is a proto decoding error (`cannot parse proto message`). */
const PROTO_DECODE_CODES = new Set(['MESH_UNKNOWN_FIELD', 'MESH_WRONG_TYPE', 'MESH_UNKNOWN_ENUM_VALUE', 'MESH_BAD_MAP_KEY']);

function locationOf(diagnostic: Diagnostic): string {
  const line = diagnostic.position === undefined ? '' : `:${diagnostic.position.line}`;
  const path = diagnostic.path === undefined ? '' : `, ${diagnostic.path}`;
  return ` (at ${diagnostic.sourceName}${line}${path})`;
}

function bodyOf(diagnostic: Diagnostic): string {
  const text = diagnostic.istioctlMessage ?? diagnostic.message;
  const isSpecDecode = PROTO_DECODE_CODES.has(diagnostic.code) && diagnostic.path?.startsWith('spec') === true;
  return isSpecDecode ? `cannot parse proto message: ${text}` : text;
}

/** One finding as istioctl validate prints it: `Kind/namespace/name: message`. */
export function istioctlValidateLine(diagnostic: Diagnostic, locations = true): string {
  const suffix = locations ? locationOf(diagnostic) : '';
  const resource = diagnostic.resource;
  if (diagnostic.code === 'MESH_INPUT_UNREADABLE') return diagnostic.message;
  if (resource === undefined) {
    const line = diagnostic.position === undefined ? '' : `line ${diagnostic.position.line}: `;
    return `failed to decode file ${diagnostic.sourceName}: ${line}${diagnostic.message}${locations && diagnostic.path !== undefined ? ` (at ${diagnostic.path})` : ''}`;
  }
  return `${resource.kind}/${resource.namespace}/${resource.name}: ${bodyOf(diagnostic)}${suffix}`;
}

/** Go multierror's list format (`N errors occurred:` then tab-indented bullets). */
function multiError(lines: readonly string[]): string {
  if (lines.length === 1) return `1 error occurred:\n\t* ${lines[0] ?? ''}\n\n`;
  return `${lines.length} errors occurred:\n\t${lines.map((line) => `* ${line}`).join('\n\t')}\n\n`;
}

function warningBlock(lines: readonly string[]): string {
  return `\n\t${lines.map((line) => `* ${line}`).join('\n\t')}\n`;
}

function warningsText(report: InputReport, warnings: readonly string[]): string {
  if (report.sourceName === '-') return warningBlock(warnings);
  return `"${report.sourceName}" has warnings: ${warningBlock(warnings)}\n`;
}

/**
 * The complete `istioctl validate` output for `reports`: per input `"<file>" is valid`,
 * `"<file>" has warnings: ...`, and when anything failed, `Error: N errors occurred: ...`.
 */
export function formatValidateText(reports: readonly InputReport[], options: ValidateTextOptions = {}): ValidateText {
  const locations = options.locations ?? true;
  const errors: string[] = [];
  let warningCount = 0;
  const perInput = reports.map((report) => {
    const warnings = report.diagnostics.filter((d) => d.severity === 'warning').map((d) => istioctlValidateLine(d, locations));
    errors.push(...report.diagnostics.filter((d) => d.severity === 'error').map((d) => istioctlValidateLine(d, locations)));
    warningCount += warnings.length;
    return { report, warnings };
  });
  const warningSection = perInput.filter((entry) => entry.warnings.length > 0).map((entry) => warningsText(entry.report, entry.warnings)).join('');
  if (errors.length > 0) return { text: `${warningSection}Error: ${multiError(errors)}\n`, failed: true };
  if ((options.strict ?? false) && warningCount > 0) {
    const noun = warningCount === 1 ? 'warning' : 'warnings';
    return { text: `${warningSection}Error: ${warningCount} ${noun} treated as errors (--strict)\n`, failed: true };
  }
  const lines = perInput.map(({ report, warnings }) => {
    if (warnings.length > 0) return warningsText(report, warnings);
    return report.sourceName === '-' ? 'validation succeed\n' : `"${report.sourceName}" is valid\n`;
  });
  return { text: lines.join(''), failed: (options.strict ?? false) && warningCount > 0 };
}

const LEVELS: Readonly<Record<Diagnostic['severity'], string>> = { error: 'Error', warning: 'Warning', info: 'Info' };

/** One `istioctl analyze` line: `Level [CODE] (Kind ns/name file:line) message`. */
export function istioctlAnalyzeLine(diagnostic: Diagnostic): string {
  const resource = diagnostic.resource;
  const where = diagnostic.position === undefined ? diagnostic.sourceName : `${diagnostic.sourceName}:${diagnostic.position.line}`;
  const origin = resource === undefined ? ` (${where})` : ` (${resource.kind} ${resource.namespace}/${resource.name} ${where})`;
  return `${LEVELS[diagnostic.severity]} [${diagnostic.code}]${origin} ${diagnostic.message}`;
}
