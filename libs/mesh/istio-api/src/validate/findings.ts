/** Collects validation findings for one resource and turns them into located diagnostics. */
import type { DiagnosticCode } from '../diagnostics/codes';
import type { Diagnostic, DiagnosticOrigin, Severity } from '../diagnostics/diagnostic';
import type { SourcePosition } from '../model/meta';
import type { LoadedResource } from '../model/resources';
import { resourceRefOf } from '../model/resources';

/** Strips the last `.field` or `[index]` segment of a field path. */
function parentPath(path: string): string | undefined {
  const match = /(\.[^.[\]]+|\[[^\]]*\])$/.exec(path);
  return match === null ? undefined : path.slice(0, match.index);
}

/** The position of `path` in `loaded`, or of its nearest ancestor that has one. */
export function positionOfPath(loaded: LoadedResource, path: string): SourcePosition {
  let current: string | undefined = path;
  while (current !== undefined && current !== '') {
    const position = loaded.positions.get(current);
    if (position !== undefined) return position;
    current = parentPath(current);
  }
  return loaded.origin.position;
}

export class Findings {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly loaded: LoadedResource,
    private readonly origin: DiagnosticOrigin,
  ) {}

  /** Adds a finding at `path`; `position` overrides where it points (default: the path's line). */
  add(severity: Severity, code: DiagnosticCode, message: string, path: string, position?: SourcePosition): void {
    this.diagnostics.push({
      code,
      severity,
      origin: this.origin,
      message,
      sourceName: this.loaded.origin.sourceName,
      position: position ?? positionOfPath(this.loaded, path),
      path,
      resource: resourceRefOf(this.loaded.resource),
    });
  }

  error(code: DiagnosticCode, message: string, path: string): void {
    this.add('error', code, message, path);
  }

  warning(code: DiagnosticCode, message: string, path: string): void {
    this.add('warning', code, message, path);
  }

  /** Where the resource itself starts. */
  resourcePosition(): SourcePosition {
    return this.loaded.origin.position;
  }

  errorCount(): number {
    return this.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  }
}
