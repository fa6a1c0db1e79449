/** Decodes the parts of Namespaces and Pods that the analyzers read; other fields are ignored. */
import type { NamespaceObject, PodContainer, PodObject } from '../model/inventory';
import type { ObjectMeta } from '../model/meta';
import type { YMapNode, YNode } from '../load/yaml-tree';

function entryOf(node: YNode | undefined, key: string): YNode | undefined {
  if (node === undefined || node.kind !== 'map') return undefined;
  return node.entries.find((entry) => entry.key === key)?.value;
}

function textOf(node: YNode | undefined): string {
  return node !== undefined && node.kind === 'scalar' && typeof node.value === 'string' ? node.value : '';
}

function containersOf(node: YNode | undefined): PodContainer[] {
  if (node === undefined || node.kind !== 'seq') return [];
  return node.items.map((item) => ({ name: textOf(entryOf(item, 'name')), image: textOf(entryOf(item, 'image')) }));
}

export function decodeNamespace(metadata: ObjectMeta): NamespaceObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata };
}

export function decodePod(root: YMapNode, metadata: ObjectMeta): PodObject {
  const spec = entryOf(root, 'spec');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    containers: containersOf(entryOf(spec, 'containers')),
    initContainers: containersOf(entryOf(spec, 'initContainers')),
  };
}
