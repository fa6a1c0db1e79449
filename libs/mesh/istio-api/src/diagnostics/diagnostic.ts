/**
 * Diagnostics: everything the loader, the validator and the analyzers find, collected rather
 * than thrown. Each one names the input, the line and the field path it is about.
 */
import type { SourcePosition } from '../model/meta';
import type { ResourceRef } from '../model/resources';
import type { DiagnosticCode } from './codes';

/** How bad a finding is. istioctl validate fails only on errors; `--strict` also on warnings. */
export type Severity = 'error' | 'warning' | 'info';

/**
 * Which layer produced a diagnostic:
 * - `load`: reading the text (size limits, YAML syntax, kinds, unknown fields, field types);
 * - `webhook`: istiod's validation webhook / `istioctl validate`;
 * - `crd`: the API server's OpenAPI/CEL schema of the CRD (kubectl reports these);
 * - `analyzer`: an `istioctl analyze` analyzer (IST codes);
 * - `advice`: ward's own advisory checks (not issued by Istio);
 * - `mesh-config`: reading a MeshConfig file.
 */
export type DiagnosticOrigin = 'load' | 'webhook' | 'crd' | 'analyzer' | 'advice' | 'mesh-config';

/** One finding. */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly origin: DiagnosticOrigin;
  /** The message as Istio words it when Istio has the check; ward's own wording otherwise. */
  readonly message: string;
  /**
   * For webhook findings: the text istioctl prints after the `Kind/namespace/name:` prefix when it
   * differs from `message` (AuthorizationPolicy errors carry `invalid policy <name>.<ns>:`).
   */
  readonly istioctlMessage?: string;
  /** The input: a file path as given, `-` for stdin. */
  readonly sourceName: string;
  /** Where in the input; absent only when the input could not be read at all. */
  readonly position?: SourcePosition;
  /** Canonical field path, e.g. `spec.rules[2].from[0].source.principals`. */
  readonly path?: string;
  /** The resource the finding is about, when the document got that far. */
  readonly resource?: ResourceRef;
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error');
}

/** Orders diagnostics by source, then line, then column, keeping the input order for ties. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics
    .map((diagnostic, index) => ({ diagnostic, index }))
    .sort((a, b) => {
      if (a.diagnostic.sourceName !== b.diagnostic.sourceName) {
        return a.diagnostic.sourceName < b.diagnostic.sourceName ? -1 : 1;
      }
      const lineA = a.diagnostic.position?.line ?? 0;
      const lineB = b.diagnostic.position?.line ?? 0;
      if (lineA !== lineB) return lineA - lineB;
      const columnA = a.diagnostic.position?.column ?? 0;
      const columnB = b.diagnostic.position?.column ?? 0;
      return columnA !== columnB ? columnA - columnB : a.index - b.index;
    })
    .map((entry) => entry.diagnostic);
}
