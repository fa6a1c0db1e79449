/** A problem found while decoding a document into the typed model. */
import type { LoadCode } from '../diagnostics/codes';
import type { Severity } from '../diagnostics/diagnostic';
import type { SourcePosition } from '../model/meta';
import type { YNode } from '../load/yaml-tree';

export interface DecodeIssue {
  readonly code: LoadCode | 'ADVICE_NULL_LIST_ELEMENT';
  readonly severity: Severity;
  readonly message: string;
  readonly path: string;
  readonly position: SourcePosition;
}

/** Collects issues and field positions while a document is decoded. */
export class DecodeContext {
  readonly issues: DecodeIssue[] = [];
  readonly positions = new Map<string, SourcePosition>();

  error(code: LoadCode, message: string, path: string, position: SourcePosition): void {
    this.issues.push({ code, severity: 'error', message, path, position });
  }

  note(issue: DecodeIssue): void {
    this.issues.push(issue);
  }

  hasErrors(): boolean {
    return this.issues.some((issue) => issue.severity === 'error');
  }
}

/** The JSON type name of a node, as Go's encoding/json words it in its errors. */
export function jsonTypeName(node: YNode): string {
  if (node.kind === 'map') return 'object';
  if (node.kind === 'seq') return 'array';
  const value = node.value;
  if (value === null) return 'null';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  return 'string';
}

/** A short rendering of a scalar for messages (`80`, `true`, `"x"`), or its JSON type. */
export function describeNode(node: YNode): string {
  if (node.kind !== 'scalar') return jsonTypeName(node);
  const value = node.value;
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${jsonTypeName(node)} ${String(value)}`;
}

/** Reports a node of the wrong JSON type at `path`. */
export function wrongType(context: DecodeContext, expected: string, node: YNode, path: string): void {
  const hint = expected === 'a string' && node.kind === 'scalar' && node.value !== null ? ` (quote it: "${String(node.value)}")` : '';
  context.error('MESH_WRONG_TYPE', `${path}: expected ${expected}, found ${describeNode(node)}${hint}`, path, node.position);
}
