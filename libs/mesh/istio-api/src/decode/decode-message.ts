/**
 * Decodes a positioned YAML tree into a plain object following a {@link MessageSchema}, with
 * jsonpb's semantics (see the model docs): proto or JSON field names, `null` fields absent,
 * empty lists absent, `null` list elements as empty messages or `''`, unknown fields rejected.
 */
import type { YMapNode, YNode } from '../load/yaml-tree';
import { DecodeContext, wrongType } from './decode-issue';
import type { FieldSchema, FieldType, MessageSchema } from './message-schema';

type Decoded = Record<string, unknown>;

const UINT32_MAX = 4_294_967_295;

function findField(schema: MessageSchema, key: string): FieldSchema | undefined {
  return schema.fields.find((candidate) => candidate.jsonName === key || candidate.protoName === key);
}

function decodeString(node: YNode, path: string, context: DecodeContext): string | undefined {
  if (node.kind === 'scalar' && node.value === null) return '';
  if (node.kind === 'scalar' && typeof node.value === 'string') return node.value;
  wrongType(context, 'a string', node, path);
  return undefined;
}

function decodeStringList(node: YNode, path: string, context: DecodeContext): string[] | undefined {
  if (node.kind !== 'seq') {
    wrongType(context, 'a list of strings', node, path);
    return undefined;
  }
  const values: string[] = [];
  node.items.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    context.positions.set(itemPath, item.position);
    const value = decodeString(item, itemPath, context);
    if (value !== undefined) values.push(value);
  });
  return values.length > 0 ? values : undefined;
}

function decodeStringMap(node: YNode, path: string, context: DecodeContext): Record<string, string> | undefined {
  if (node.kind !== 'map') {
    wrongType(context, 'a map of strings', node, path);
    return undefined;
  }
  const entries: Record<string, string> = {};
  for (const entry of node.entries) {
    const entryPath = `${path}[${entry.key}]`;
    context.positions.set(entryPath, entry.value.position);
    const value = decodeString(entry.value, entryPath, context);
    if (value !== undefined) entries[entry.key] = value;
  }
  return entries;
}

function decodeEnum(node: YNode, fieldType: Extract<FieldType, { type: 'enum' }>, path: string, context: DecodeContext): string | undefined {
  if (node.kind === 'scalar' && typeof node.value === 'string' && fieldType.values.includes(node.value)) return node.value;
  if (node.kind === 'scalar' && typeof node.value === 'number' && Number.isInteger(node.value)) {
    const name = fieldType.values[node.value];
    if (name !== undefined) return name;
  }
  if (node.kind !== 'scalar') {
    wrongType(context, `one of ${fieldType.values.join(', ')}`, node, path);
    return undefined;
  }
  const shown = typeof node.value === 'string' ? JSON.stringify(node.value) : String(node.value);
  context.error(
    'MESH_UNKNOWN_ENUM_VALUE',
    `${path}: unknown value ${shown} for enum ${fieldType.enumName}; expected one of ${fieldType.values.join(', ')}`,
    path,
    node.position,
  );
  return undefined;
}

function decodeMessageListItem(schema: MessageSchema, item: YNode, itemPath: string, context: DecodeContext): Decoded | undefined {
  if (item.kind === 'scalar' && item.value === null) {
    context.note({
      code: 'ADVICE_NULL_LIST_ELEMENT',
      severity: 'warning',
      message: `${itemPath} is null; istiod decodes it as an empty ${schema.fullName.split('.').pop() ?? 'message'} {}`,
      path: itemPath,
      position: item.position,
    });
    return {};
  }
  return decodeMessage(schema, item, itemPath, context);
}

function decodeMessageList(schema: MessageSchema, node: YNode, path: string, context: DecodeContext): Decoded[] | undefined {
  if (node.kind !== 'seq') {
    wrongType(context, 'a list', node, path);
    return undefined;
  }
  const items: Decoded[] = [];
  node.items.forEach((item, index) => {
    const itemPath = `${path}[${index}]`;
    context.positions.set(itemPath, item.position);
    const decoded = decodeMessageListItem(schema, item, itemPath, context);
    if (decoded !== undefined) items.push(decoded);
  });
  return items.length > 0 ? items : undefined;
}

function parseUint32Key(key: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(key)) return undefined;
  const value = Number(key);
  return value <= UINT32_MAX ? value : undefined;
}

function decodeUint32Map(schema: MessageSchema, node: YNode, path: string, context: DecodeContext): Record<string, Decoded> | undefined {
  if (node.kind !== 'map') {
    wrongType(context, 'a map keyed by port number', node, path);
    return undefined;
  }
  const entries: Record<string, Decoded> = {};
  for (const entry of node.entries) {
    const entryPath = `${path}[${entry.key}]`;
    context.positions.set(entryPath, entry.value.position);
    const port = parseUint32Key(entry.key);
    if (port === undefined) {
      context.error('MESH_BAD_MAP_KEY', `${path}: key ${JSON.stringify(entry.key)} is not an unsigned 32-bit integer`, entryPath, entry.keyPosition);
      continue;
    }
    const isNull = entry.value.kind === 'scalar' && entry.value.value === null;
    const decoded = isNull ? {} : decodeMessage(schema, entry.value, entryPath, context);
    if (decoded !== undefined) entries[String(port)] = decoded;
  }
  return entries;
}

function decodeFieldValue(fieldSchema: FieldSchema, node: YNode, path: string, context: DecodeContext): unknown {
  const fieldType = fieldSchema.fieldType;
  switch (fieldType.type) {
    case 'string':
      return decodeString(node, path, context);
    case 'string-list':
      return decodeStringList(node, path, context);
    case 'string-map':
      return decodeStringMap(node, path, context);
    case 'enum':
      return decodeEnum(node, fieldType, path, context);
    case 'message':
      return decodeMessage(fieldType.message(), node, path, context);
    case 'message-list':
      return decodeMessageList(fieldType.message(), node, path, context);
    case 'uint32-map':
      return decodeUint32Map(fieldType.message(), node, path, context);
  }
}

function defaultValue(fieldType: FieldType): unknown {
  if (fieldType.type === 'string') return '';
  if (fieldType.type === 'enum') return fieldType.values[0];
  if (fieldType.type === 'string-map') return {};
  return undefined;
}

function decodeEntries(schema: MessageSchema, node: YMapNode, path: string, context: DecodeContext): Decoded {
  const decoded: Decoded = {};
  for (const entry of node.entries) {
    const fieldSchema = findField(schema, entry.key);
    const prefix = path === '' ? '' : `${path}.`;
    if (fieldSchema === undefined) {
      const fieldPath = `${prefix}${entry.key}`;
      context.error('MESH_UNKNOWN_FIELD', `unknown field ${JSON.stringify(entry.key)} in ${schema.fullName}`, fieldPath, entry.keyPosition);
      continue;
    }
    const fieldPath = `${prefix}${fieldSchema.jsonName}`;
    context.positions.set(fieldPath, entry.value.position);
    if (entry.value.kind === 'scalar' && entry.value.value === null) continue;
    const value = decodeFieldValue(fieldSchema, entry.value, fieldPath, context);
    if (value !== undefined) decoded[fieldSchema.jsonName] = value;
  }
  return decoded;
}

/**
 * Decodes `node` as `schema` at field path `path` (`''` for a root). Errors are collected in
 * `context`; the returned object holds what could be decoded, with defaults filled in.
 */
export function decodeMessage(schema: MessageSchema, node: YNode, path: string, context: DecodeContext): Decoded | undefined {
  if (node.kind !== 'map') {
    wrongType(context, `an object (${schema.fullName})`, node, path === '' ? '(root)' : path);
    return undefined;
  }
  const decoded = decodeEntries(schema, node, path, context);
  for (const fieldSchema of schema.fields) {
    if (fieldSchema.withDefault === true && decoded[fieldSchema.jsonName] === undefined) {
      decoded[fieldSchema.jsonName] = defaultValue(fieldSchema.fieldType);
    }
  }
  return decoded;
}

export { DecodeContext };
