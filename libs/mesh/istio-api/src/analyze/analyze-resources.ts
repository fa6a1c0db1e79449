/**
 * The `istioctl analyze` messages for the two security kinds: schema validation (IST0106 errors,
 * IST0133 warnings), AuthorizationPolicy namespaces that match no Namespace (IST0101) and
 * AuthorizationPolicy selectors that match no in-mesh pod (IST0127). Namespaces and pods come
 * from the same inputs (`v1 Namespace`, `v1 Pod` documents), as with `istioctl analyze` on files.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { AuthorizationPolicy } from '../model/authorization-policy';
import type { NamespaceObject, PodObject } from '../model/inventory';
import type { LoadedResource, SecurityResource } from '../model/resources';
import { Findings } from '../validate/findings';
import { goQuote } from '../validate/go-quote';
import { validateAuthorizationPolicy } from '../validate/authorization-policy';
import { validatePeerAuthentication } from '../validate/peer-authentication';
import { meshPodLabelsByNamespace, selectorMatches, selectorText } from './workloads-in-mesh';

export interface AnalyzeOptions {
  /** Mesh root namespace (`meshConfig.rootNamespace`). Default `istio-system`. */
  readonly rootNamespace?: string;
  /** Namespace for resources that have none. Default `default`. */
  readonly defaultNamespace?: string;
}

interface Inventory {
  readonly namespaceNames: readonly string[];
  readonly podLabels: Map<string, Readonly<Record<string, string>>[]>;
}

function inventoryOf(resources: readonly LoadedResource[]): Inventory {
  const namespaces = new Map<string, NamespaceObject>();
  const pods: PodObject[] = [];
  for (const { resource } of resources) {
    if (resource.kind === 'Namespace') namespaces.set(resource.metadata.name, resource);
    if (resource.kind === 'Pod') pods.push(resource);
  }
  return { namespaceNames: [...namespaces.keys()], podLabels: meshPodLabelsByNamespace(pods, namespaces) };
}

/** `namespaceMatch`: `*`, `*suffix`, `prefix*`, otherwise case-insensitive equality. */
function namespaceMatches(namespace: string, expression: string): boolean {
  if (expression === '*') return true;
  if (expression.startsWith('*')) return namespace.endsWith(expression.slice(1));
  if (expression.endsWith('*')) return namespace.startsWith(expression.slice(0, -1));
  return namespace.toLowerCase() === expression.toLowerCase();
}

function noMatchingWorkloads(findings: Findings, labels: string): void {
  // istioctl points this message at the resource, not at its selector.
  findings.add('warning', 'IST0127', `No matching workloads for this resource with the following labels: ${labels}`, 'spec.selector', findings.resourcePosition());
}

function analyzeWorkloads(policy: AuthorizationPolicy, namespace: string, root: string, inventory: Inventory, findings: Findings): void {
  const selector = policy.spec.selector;
  const inNamespace = inventory.podLabels.get(namespace) ?? [];
  if (namespace === root) {
    if (selector === undefined) return;
    const all = [...inventory.podLabels.values()].flat();
    if (!all.some((labels) => selectorMatches(selector.matchLabels, labels))) noMatchingWorkloads(findings, selectorText(selector.matchLabels));
    return;
  }
  if (selector === undefined) {
    if (inNamespace.length === 0) noMatchingWorkloads(findings, '');
    return;
  }
  if (!inNamespace.some((labels) => selectorMatches(selector.matchLabels, labels))) noMatchingWorkloads(findings, selectorText(selector.matchLabels));
}

function analyzeNamespaces(policy: AuthorizationPolicy, inventory: Inventory, findings: Findings): void {
  (policy.spec.rules ?? []).forEach((rule, ruleIndex) => {
    (rule.from ?? []).forEach((from, fromIndex) => {
      for (const field of ['namespaces', 'notNamespaces'] as const) {
        (from.source?.[field] ?? []).forEach((expression, index) => {
          if (inventory.namespaceNames.some((name) => namespaceMatches(name, expression))) return;
          const path = `spec.rules[${ruleIndex}].from[${fromIndex}].source.${field}[${index}]`;
          findings.add('error', 'IST0101', `Referenced namespace not found: ${goQuote(expression)}`, path);
        });
      }
    });
  });
}

function schemaMessages(loaded: LoadedResource<SecurityResource>, namespace: string): Diagnostic[] {
  const findings = new Findings(loaded, 'analyzer');
  const resource = loaded.resource;
  // analyze validates the spec with only name and namespace: no metadata (dry-run) checks.
  if (resource.kind === 'AuthorizationPolicy') validateAuthorizationPolicy(resource, findings);
  else validatePeerAuthentication(resource, findings);
  const prefix = resource.kind === 'AuthorizationPolicy' ? `invalid policy ${resource.metadata.name}.${namespace}: ` : '';
  return findings.diagnostics.map((diagnostic) => ({
    ...diagnostic,
    code: diagnostic.severity === 'error' ? 'IST0106' : 'IST0133',
    message:
      diagnostic.severity === 'error' ? `Schema validation error: ${prefix}${diagnostic.message}` : `Schema validation warning: ${diagnostic.message}`,
  }));
}

function isSecurity(loaded: LoadedResource): loaded is LoadedResource<SecurityResource> {
  return loaded.resource.kind === 'AuthorizationPolicy' || loaded.resource.kind === 'PeerAuthentication';
}

/** Runs the analyzers over everything loaded, in input order. */
export function analyzeResources(resources: readonly LoadedResource[], options: AnalyzeOptions = {}): Diagnostic[] {
  const root = options.rootNamespace ?? 'istio-system';
  const inventory = inventoryOf(resources);
  const diagnostics: Diagnostic[] = [];
  for (const loaded of resources.filter(isSecurity)) {
    const namespace = loaded.resource.metadata.namespace === '' ? (options.defaultNamespace ?? 'default') : loaded.resource.metadata.namespace;
    diagnostics.push(...schemaMessages(loaded, namespace));
    if (loaded.resource.kind !== 'AuthorizationPolicy') continue;
    const findings = new Findings(loaded, 'analyzer');
    analyzeWorkloads(loaded.resource, namespace, root, inventory, findings);
    analyzeNamespaces(loaded.resource, inventory, findings);
    diagnostics.push(...findings.diagnostics);
  }
  // Messages name the namespace the resource is analyzed in (the default one when none is written).
  return diagnostics.map((diagnostic) =>
    diagnostic.resource !== undefined && diagnostic.resource.namespace === ''
      ? { ...diagnostic, resource: { ...diagnostic.resource, namespace: options.defaultNamespace ?? 'default' } }
      : diagnostic,
  );
}
