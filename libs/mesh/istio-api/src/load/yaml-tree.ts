/**
 * A composed YAML document turned into a small positioned tree of maps, sequences and scalars
 * (the JSON data model istiod decodes), with aliases expanded under a node budget and a depth
 * limit, so the tree can never be larger or deeper than the limits allow.
 */
import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Document, LineCounter, Node as YamlNode } from 'yaml';
import type { SourcePosition } from '../model/meta';
import type { LoadCode } from '../diagnostics/codes';

/** A JSON-like scalar. YAML timestamps and other typed scalars keep their source text. */
export type ScalarValue = string | number | boolean | null;

export interface YScalarNode {
  readonly kind: 'scalar';
  readonly position: SourcePosition;
  readonly value: ScalarValue;
}

export interface YSeqNode {
  readonly kind: 'seq';
  readonly position: SourcePosition;
  readonly items: readonly YNode[];
}

export interface YEntry {
  readonly key: string;
  readonly keyPosition: SourcePosition;
  readonly value: YNode;
}

export interface YMapNode {
  readonly kind: 'map';
  readonly position: SourcePosition;
  readonly entries: readonly YEntry[];
}

export type YNode = YScalarNode | YSeqNode | YMapNode;

/** Why a document could not be turned into a tree. */
export interface TreeProblem {
  readonly code: LoadCode;
  readonly message: string;
  readonly position: SourcePosition;
}

export type TreeResult = { readonly ok: true; readonly root: YNode } | { readonly ok: false; readonly problem: TreeProblem };

/** Limits applied while building the tree. */
export interface TreeLimits {
  readonly maxNestingDepth: number;
  readonly maxNodes: number;
  readonly maxCollectionItems: number;
}

class TreeLimitExceeded extends Error {
  constructor(readonly problem: TreeProblem) {
    super(problem.message);
  }
}

interface Walk {
  readonly document: Document;
  readonly lineCounter: LineCounter;
  readonly limits: TreeLimits;
  nodes: number;
}

function positionAt(walk: Walk, offset: number | undefined): SourcePosition {
  const { line, col } = walk.lineCounter.linePos(offset ?? 0);
  return { line, column: col };
}

function fail(code: LoadCode, message: string, position: SourcePosition): never {
  throw new TreeLimitExceeded({ code, message, position });
}

function scalarValue(node: { value: unknown; source?: string }): ScalarValue {
  const { value } = node;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  // Timestamps, binary and other typed scalars: istiod's YAML-to-JSON step keeps them as text.
  return node.source ?? String(value);
}

function keyText(key: unknown, position: SourcePosition): string {
  if (!isScalar(key)) {
    if (key === null || key === undefined) return '';
    fail('MESH_YAML_UNSUPPORTED', 'map keys must be scalars', position);
  }
  const value = key.value;
  if (typeof value === 'symbol') {
    fail('MESH_YAML_UNSUPPORTED', 'YAML merge keys (<<) are not supported; write the fields out', position);
  }
  if (value === null || value === undefined) return 'null';
  return typeof value === 'string' ? value : String(scalarValue(key as { value: unknown; source?: string }));
}

function countNode(walk: Walk, position: SourcePosition): void {
  walk.nodes += 1;
  if (walk.nodes > walk.limits.maxNodes) {
    fail('MESH_TOO_MANY_NODES', `document has more than ${walk.limits.maxNodes} nodes (aliases expanded)`, position);
  }
}

function checkItems(walk: Walk, count: number, position: SourcePosition): void {
  if (count > walk.limits.maxCollectionItems) {
    fail('MESH_TOO_MANY_ITEMS', `collection has ${count} items, more than the limit of ${walk.limits.maxCollectionItems}`, position);
  }
}

function toTree(walk: Walk, input: unknown, depth: number, fallback: SourcePosition): YNode {
  let node = input;
  // An alias may point at another alias only through a collection, so one resolve suffices.
  if (isAlias(node)) node = node.resolve(walk.document);
  if (node === null || node === undefined) {
    countNode(walk, fallback);
    return { kind: 'scalar', position: fallback, value: null };
  }
  const position = positionAt(walk, (node as YamlNode).range?.[0]);
  countNode(walk, position);
  if (isScalar(node)) return { kind: 'scalar', position, value: scalarValue(node) };
  if (depth >= walk.limits.maxNestingDepth) {
    fail('MESH_NESTING_TOO_DEEP', `nesting is deeper than ${walk.limits.maxNestingDepth} levels (aliases expanded)`, position);
  }
  if (isSeq(node)) {
    checkItems(walk, node.items.length, position);
    const items = node.items.map((item) => toTree(walk, item, depth + 1, position));
    return { kind: 'seq', position, items };
  }
  if (isMap(node)) {
    checkItems(walk, node.items.length, position);
    const entries: YEntry[] = [];
    for (const pair of node.items) {
      const keyPosition = positionAt(walk, (pair.key as YamlNode | null)?.range?.[0] ?? (node as YamlNode).range?.[0]);
      const key = keyText(pair.key, keyPosition);
      entries.push({ key, keyPosition, value: toTree(walk, pair.value, depth + 1, keyPosition) });
    }
    return { kind: 'map', position, entries };
  }
  return fail('MESH_YAML_UNSUPPORTED', 'unsupported YAML node', position);
}

/** Builds the positioned tree of `document`, or says which limit or construct stopped it. */
export function documentTree(document: Document, lineCounter: LineCounter, limits: TreeLimits): TreeResult {
  const walk: Walk = { document, lineCounter, limits, nodes: 0 };
  const start = positionAt(walk, document.range?.[0]);
  try {
    return { ok: true, root: toTree(walk, document.contents, 0, start) };
  } catch (error) {
    if (error instanceof TreeLimitExceeded) return { ok: false, problem: error.problem };
    throw error;
  }
}
