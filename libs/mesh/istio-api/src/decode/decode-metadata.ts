/** Decodes `metadata` (the part of Kubernetes ObjectMeta that istiod reads). */
import type { ObjectMeta } from '../model/meta';
import type { YNode } from '../load/yaml-tree';
import type { DecodeContext} from './decode-issue';
import { wrongType } from './decode-issue';

/** ObjectMeta fields that are valid but not read; anything else gets a warning. */
const IGNORED_METADATA_FIELDS = new Set([
  'uid', 'resourceVersion', 'generation', 'generateName', 'selfLink', 'deletionTimestamp',
  'deletionGracePeriodSeconds', 'ownerReferences', 'finalizers', 'managedFields',
]);

function stringAt(node: YNode, path: string, context: DecodeContext): string {
  if (node.kind === 'scalar' && node.value === null) return '';
  if (node.kind === 'scalar' && typeof node.value === 'string') return node.value;
  wrongType(context, 'a string', node, path);
  return '';
}

function stringMapAt(node: YNode, path: string, context: DecodeContext): Record<string, string> {
  if (node.kind === 'scalar' && node.value === null) return {};
  if (node.kind !== 'map') {
    wrongType(context, 'a map of strings', node, path);
    return {};
  }
  const values: Record<string, string> = {};
  for (const entry of node.entries) {
    const entryPath = `${path}[${entry.key}]`;
    context.positions.set(entryPath, entry.value.position);
    values[entry.key] = stringAt(entry.value, entryPath, context);
  }
  return values;
}

interface MutableMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  creationTimestamp?: string;
}

function decodeMetadataEntry(meta: MutableMeta, key: string, value: YNode, context: DecodeContext): boolean {
  const path = `metadata.${key}`;
  switch (key) {
    case 'name':
      meta.name = stringAt(value, path, context);
      return true;
    case 'namespace':
      meta.namespace = stringAt(value, path, context);
      return true;
    case 'labels':
      meta.labels = stringMapAt(value, path, context);
      return true;
    case 'annotations':
      meta.annotations = stringMapAt(value, path, context);
      return true;
    case 'creationTimestamp':
      meta.creationTimestamp = stringAt(value, path, context);
      return true;
    default:
      return IGNORED_METADATA_FIELDS.has(key);
  }
}

/** Decodes `node` as `metadata`; a missing metadata decodes as empty. */
export function decodeMetadata(node: YNode | undefined, context: DecodeContext): ObjectMeta {
  const meta: MutableMeta = { name: '', namespace: '', labels: {}, annotations: {} };
  if (node === undefined || (node.kind === 'scalar' && node.value === null)) return meta;
  if (node.kind !== 'map') {
    wrongType(context, 'an object (metadata)', node, 'metadata');
    return meta;
  }
  for (const entry of node.entries) {
    context.positions.set(`metadata.${entry.key}`, entry.value.position);
    if (!decodeMetadataEntry(meta, entry.key, entry.value, context)) {
      context.note({
        code: 'MESH_UNKNOWN_METADATA_FIELD',
        severity: 'warning',
        message: `unknown field ${JSON.stringify(entry.key)} in metadata`,
        path: `metadata.${entry.key}`,
        position: entry.keyPosition,
      });
    }
  }
  return meta;
}
