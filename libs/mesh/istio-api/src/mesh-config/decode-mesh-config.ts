/**
 * Decodes a positioned YAML tree as a MeshConfig message the way istiod does (YAML → JSON →
 * legacy jsonpb): JSON or proto field names, quoted numbers accepted, `null` meaning unset,
 * durations in Go's syntax. Unknown fields are ignored by istiod (it retries without strictness),
 * so they are warnings here; a value of the wrong type makes istiod reject the whole mesh
 * config, so it is an error.
 */
import type { SourcePosition } from '../model/meta';
import type { YNode } from '../load/yaml-tree';
import { describeNode } from '../decode/decode-issue';
import type { MeshConfigCode } from '../diagnostics/codes';
import type { Severity } from '../diagnostics/diagnostic';
import { parseGoDuration } from '@ward/shared/clock';
import { protoDurationText } from './go-duration';
import type { MeshField, MeshFieldType, MeshMessage } from './mesh-config-schema';

/** A finding while decoding, at a field path of the MeshConfig (JSON names). */
export interface MeshConfigIssue {
  readonly code: MeshConfigCode;
  readonly severity: Severity;
  readonly message: string;
  readonly path: string;
  readonly position: SourcePosition;
}

/** Collects issues and the position of every decoded field. */
export class MeshDecodeContext {
  readonly issues: MeshConfigIssue[] = [];
  readonly positions = new Map<string, SourcePosition>();

  add(severity: Severity, code: MeshConfigCode, message: string, path: string, position: SourcePosition): void {
    this.issues.push({ code, severity, message, path, position });
  }
}

type Decoded = Record<string, unknown>;

const UINT32_MAX = 4_294_967_295;
const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

function shown(path: string): string {
  return path === '' ? '(root)' : path;
}

function wrongType(context: MeshDecodeContext, expected: string, node: YNode, path: string): undefined {
  context.add('error', 'MESH_CONFIG_WRONG_TYPE', `${shown(path)}: expected ${expected}, found ${describeNode(node)}`, path, node.position);
  return undefined;
}

function decodeString(node: YNode, path: string, context: MeshDecodeContext): string | undefined {
  if (node.kind === 'scalar' && typeof node.value === 'string') return node.value;
  if (node.kind === 'scalar' && node.value === null) return '';
  const hint = node.kind === 'scalar' ? ` (quote it: "${String(node.value)}")` : '';
  context.add('error', 'MESH_CONFIG_WRONG_TYPE', `${shown(path)}: expected a string, found ${describeNode(node)}${hint}`, path, node.position);
  return undefined;
}

/** jsonpb takes integers as JSON numbers or as strings holding one. */
function decodeInteger(node: YNode, path: string, context: MeshDecodeContext, min: number, max: number): number | undefined {
  let value: number | undefined;
  if (node.kind === 'scalar' && typeof node.value === 'number') value = node.value;
  if (node.kind === 'scalar' && typeof node.value === 'string' && /^-?\d{1,20}$/u.test(node.value)) value = Number(node.value);
  if (value === undefined || !Number.isInteger(value)) return wrongType(context, max === UINT32_MAX ? 'an unsigned 32-bit integer' : 'a 32-bit integer', node, path);
  if (value < min || value > max) {
    context.add('error', 'MESH_CONFIG_WRONG_TYPE', `${shown(path)}: ${value} is out of range [${min}, ${max}]`, path, node.position);
    return undefined;
  }
  return value;
}

function decodeDuration(node: YNode, path: string, context: MeshDecodeContext): string | undefined {
  if (node.kind !== 'scalar' || typeof node.value !== 'string') return wrongType(context, 'a duration string such as "1s" or "100ms"', node, path);
  const nanos = parseGoDuration(node.value);
  if (nanos === undefined) {
    context.add('error', 'MESH_CONFIG_INVALID_VALUE', `${path}: bad Duration: time: invalid duration ${JSON.stringify(node.value)}`, path, node.position);
    return undefined;
  }
  return protoDurationText(nanos);
}

function decodeStrings(node: YNode, path: string, context: MeshDecodeContext): string[] | undefined {
  if (node.kind !== 'seq') return wrongType(context, 'a list of strings', node, path);
  const values: string[] = [];
  node.items.forEach((item, index) => {
    context.positions.set(`${path}[${index}]`, item.position);
    const value = decodeString(item, `${path}[${index}]`, context);
    if (value !== undefined) values.push(value);
  });
  return values;
}

function decodeStringMap(node: YNode, path: string, context: MeshDecodeContext): Record<string, string> | undefined {
  if (node.kind !== 'map') return wrongType(context, 'a map of strings', node, path);
  const entries: Record<string, string> = {};
  for (const entry of node.entries) {
    const value = decodeString(entry.value, `${path}[${entry.key}]`, context);
    if (value !== undefined) entries[entry.key] = value;
  }
  return entries;
}

function decodeEnum(node: YNode, values: readonly string[], path: string, context: MeshDecodeContext): string | undefined {
  if (node.kind === 'scalar' && typeof node.value === 'string' && values.includes(node.value)) return node.value;
  if (node.kind === 'scalar' && typeof node.value === 'number' && values[node.value] !== undefined) return values[node.value];
  context.add('error', 'MESH_CONFIG_INVALID_VALUE', `${path}: unknown value ${node.kind === 'scalar' ? JSON.stringify(node.value) : node.kind}; expected one of ${values.join(', ')}`, path, node.position);
  return undefined;
}

function decodeMessages(message: MeshMessage, node: YNode, path: string, context: MeshDecodeContext): Decoded[] | undefined {
  if (node.kind !== 'seq') return wrongType(context, `a list of ${message.name}`, node, path);
  const items: Decoded[] = [];
  node.items.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    context.positions.set(itemPath, item.position);
    const decoded = item.kind === 'scalar' && item.value === null ? {} : decodeMeshMessage(message, item, itemPath, context);
    if (decoded !== undefined) items.push(decoded);
  });
  return items;
}

function decodeValue(type: MeshFieldType, node: YNode, path: string, context: MeshDecodeContext): unknown {
  switch (type.kind) {
    case 'string':
      return decodeString(node, path, context);
    case 'bool':
      return node.kind === 'scalar' && typeof node.value === 'boolean' ? node.value : wrongType(context, 'true or false', node, path);
    case 'uint32':
      return decodeInteger(node, path, context, 0, UINT32_MAX);
    case 'int32':
      return decodeInteger(node, path, context, INT32_MIN, INT32_MAX);
    case 'duration':
      return decodeDuration(node, path, context);
    case 'strings':
      return decodeStrings(node, path, context);
    case 'string-map':
      return decodeStringMap(node, path, context);
    case 'enum':
      return decodeEnum(node, type.values, path, context);
    case 'message':
      return decodeMeshMessage(type.message(), node, path, context);
    case 'messages':
      return decodeMessages(type.message(), node, path, context);
    case 'opaque':
      return undefined;
  }
}

function findField(message: MeshMessage, key: string): MeshField | undefined {
  return message.fields.find((candidate) => candidate.json === key || candidate.proto === key);
}

/**
 * Decodes `node` as `message` at `path` (`''` for the root). Returns what decoded (fields by JSON
 * name; `opaque` fields are dropped; an opaque oneof member is recorded as `$kind`).
 */
export function decodeMeshMessage(message: MeshMessage, node: YNode, path: string, context: MeshDecodeContext): Decoded | undefined {
  if (node.kind !== 'map') return wrongType(context, `an object (${message.name})`, node, path);
  const decoded: Decoded = {};
  const seen = new Map<string, string>();
  const oneofs = new Map<string, string>();
  const prefix = path === '' ? '' : `${path}.`;
  for (const entry of node.entries) {
    const field = findField(message, entry.key);
    if (field === undefined) {
      context.add('warning', 'MESH_CONFIG_UNKNOWN_FIELD', `unknown field ${JSON.stringify(entry.key)} in ${message.name}; istiod ignores it`, `${prefix}${entry.key}`, entry.keyPosition);
      continue;
    }
    const fieldPath = `${prefix}${field.json}`;
    const isNull = entry.value.kind === 'scalar' && entry.value.value === null;
    if (seen.has(field.json)) {
      context.add('error', 'MESH_CONFIG_WRONG_TYPE', `${fieldPath}: set twice (as ${seen.get(field.json) ?? ''} and ${entry.key})`, fieldPath, entry.keyPosition);
      continue;
    }
    seen.set(field.json, entry.key);
    if (field.oneof !== undefined && !isNull) {
      const other = oneofs.get(field.oneof);
      if (other !== undefined) {
        context.add('error', 'MESH_CONFIG_WRONG_TYPE', `${fieldPath}: only one of the ${field.oneof} fields may be set, ${other} is set already`, fieldPath, entry.keyPosition);
        continue;
      }
      oneofs.set(field.oneof, field.json);
      if (field.type.kind === 'opaque') decoded['$kind'] = field.json;
    }
    context.positions.set(fieldPath, entry.value.position);
    if (isNull) continue;
    const value = decodeValue(field.type, entry.value, fieldPath, context);
    if (value !== undefined) decoded[field.json] = value;
  }
  return decoded;
}
