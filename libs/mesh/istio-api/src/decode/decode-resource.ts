/**
 * Turns one parsed document into typed resources (a `v1 List` yields its items) plus
 * diagnostics. A security resource with any decoding error is not returned: nothing downstream
 * ever sees a half-decoded policy.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { AuthorizationPolicy, AuthorizationPolicySpec } from '../model/authorization-policy';
import type { PeerAuthentication, PeerAuthenticationSpec } from '../model/peer-authentication';
import type { LoadedResource, ResourceRef } from '../model/resources';
import type { ObjectMeta, SourcePosition } from '../model/meta';
import type { YMapNode, YNode } from '../load/yaml-tree';
import { DecodeContext } from './decode-issue';
import type { DecodeIssue } from './decode-issue';
import { decodeNamespace, decodePod } from './decode-inventory';
import { decodeMessage } from './decode-message';
import { decodeMetadata } from './decode-metadata';
import { AUTHORIZATION_POLICY_SCHEMA, PEER_AUTHENTICATION_SCHEMA } from './istio-schemas';
import { decideKind } from './resource-kinds';
import type { KindDecision } from './resource-kinds';

/** Where a document sits: its input and its index there. */
export interface DocumentSite {
  readonly sourceName: string;
  readonly documentIndex: number;
}

export interface DecodedDocument {
  readonly resources: readonly LoadedResource[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Top-level fields istioctl accepts on an Istio resource (any other is `unknown field`). */
const TOP_LEVEL_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

/** Nested `v1 List` documents deeper than this are rejected (each level is a list inside a list). */
const MAX_LIST_NESTING = 4;

function entry(node: YMapNode, key: string): YNode | undefined {
  return node.entries.find((candidate) => candidate.key === key)?.value;
}

function diagnosticOf(site: DocumentSite, issue: Omit<DecodeIssue, 'path'> & { path?: string }, resource?: ResourceRef): Diagnostic {
  return {
    code: issue.code,
    severity: issue.severity,
    origin: issue.code.startsWith('ADVICE_') ? 'advice' : 'load',
    message: issue.message,
    sourceName: site.sourceName,
    position: issue.position,
    ...(issue.path === undefined || issue.path === '' ? {} : { path: issue.path }),
    ...(resource === undefined ? {} : { resource }),
  };
}

function typeField(root: YMapNode, key: 'apiVersion' | 'kind'): string | undefined {
  const node = entry(root, key);
  return node !== undefined && node.kind === 'scalar' && typeof node.value === 'string' && node.value !== '' ? node.value : undefined;
}

function checkTopLevelFields(root: YMapNode, context: DecodeContext): void {
  for (const candidate of root.entries) {
    if (!TOP_LEVEL_FIELDS.has(candidate.key)) {
      context.error('MESH_UNKNOWN_FIELD', `unknown field ${JSON.stringify(candidate.key)}`, candidate.key, candidate.keyPosition);
    }
  }
}

function decodeSecurity(root: YMapNode, decision: Extract<KindDecision, { action: 'security' }>, metadata: ObjectMeta, context: DecodeContext) {
  checkTopLevelFields(root, context);
  const specNode = entry(root, 'spec');
  const schema = decision.kind === 'AuthorizationPolicy' ? AUTHORIZATION_POLICY_SCHEMA : PEER_AUTHENTICATION_SCHEMA;
  const isAbsent = specNode === undefined || (specNode.kind === 'scalar' && specNode.value === null);
  const emptyMap: YMapNode = { kind: 'map', position: root.position, entries: [] };
  if (specNode !== undefined) context.positions.set('spec', specNode.position);
  const spec = decodeMessage(schema, isAbsent ? emptyMap : specNode, 'spec', context);
  if (spec === undefined) return undefined;
  if (decision.kind === 'AuthorizationPolicy') {
    const policy: AuthorizationPolicy = { apiVersion: decision.apiVersion, kind: 'AuthorizationPolicy', metadata, spec: spec as unknown as AuthorizationPolicySpec };
    return policy;
  }
  const peer: PeerAuthentication = { apiVersion: decision.apiVersion, kind: 'PeerAuthentication', metadata, spec: spec as unknown as PeerAuthenticationSpec };
  return peer;
}

interface DecodeState {
  readonly site: DocumentSite;
  readonly resources: LoadedResource[];
  readonly diagnostics: Diagnostic[];
}

function decodeListItems(root: YMapNode, state: DecodeState, listDepth: number): void {
  const items = entry(root, 'items');
  if (items === undefined || items.kind !== 'seq') {
    state.diagnostics.push(diagnosticOf(state.site, { code: 'MESH_WRONG_TYPE', severity: 'error', message: 'List: expected "items" to be a list', position: root.position, path: 'items' }));
    return;
  }
  for (const item of items.items) decodeNode(item, state, listDepth + 1);
}

function decodeObject(root: YMapNode, decision: KindDecision, state: DecodeState, kind: string): void {
  const context = new DecodeContext();
  const metadataNode = entry(root, 'metadata');
  const metadata = decodeMetadata(metadataNode, context);
  const ref: ResourceRef = { kind, namespace: metadata.namespace, name: metadata.name };
  let resource: LoadedResource['resource'] | undefined;
  if (decision.action === 'security') resource = decodeSecurity(root, decision, metadata, context);
  else if (decision.action === 'inventory') resource = decision.kind === 'Namespace' ? decodeNamespace(metadata) : decodePod(root, metadata);
  for (const issue of context.issues) state.diagnostics.push(diagnosticOf(state.site, issue, ref));
  if (resource === undefined || context.hasErrors()) return;
  const origin = { sourceName: state.site.sourceName, documentIndex: state.site.documentIndex, position: root.position };
  state.resources.push({ resource, origin, positions: context.positions });
}

function reject(state: DecodeState, code: DecodeIssue['code'], message: string, position: SourcePosition, path?: string): void {
  state.diagnostics.push(diagnosticOf(state.site, { code, severity: 'error', message, position, ...(path === undefined ? {} : { path }) }));
}

function decodeNode(root: YNode, state: DecodeState, listDepth: number): void {
  if (root.kind !== 'map') {
    reject(state, 'MESH_NOT_AN_OBJECT', `a document must be an object with apiVersion and kind, found ${root.kind === 'seq' ? 'a list' : 'a scalar'}`, root.position);
    return;
  }
  const apiVersion = typeField(root, 'apiVersion');
  const kind = typeField(root, 'kind');
  if (apiVersion === undefined || kind === undefined) {
    const missing = apiVersion === undefined ? 'apiVersion' : 'kind';
    reject(state, 'MESH_MISSING_TYPE', `document has no ${missing} (a non-empty string is required)`, entry(root, missing)?.position ?? root.position, missing);
    return;
  }
  const decision = decideKind(apiVersion, kind);
  const kindPosition = entry(root, 'kind')?.position ?? root.position;
  if (decision.action === 'reject') {
    const code = decision.message.includes('must have apiVersion') ? 'MESH_WRONG_API_VERSION' : 'MESH_UNSUPPORTED_KIND';
    reject(state, code, decision.message, kindPosition, 'kind');
  } else if (decision.action === 'ignore') {
    state.diagnostics.push(diagnosticOf(state.site, { code: 'MESH_IGNORED_KIND', severity: 'info', message: `${kind} (${apiVersion}) is not an Istio security resource; skipped`, position: kindPosition }));
  } else if (decision.action === 'list') {
    if (listDepth >= MAX_LIST_NESTING) reject(state, 'MESH_NESTING_TOO_DEEP', `List nested more than ${MAX_LIST_NESTING} levels`, root.position);
    else decodeListItems(root, state, listDepth);
  } else {
    decodeObject(root, decision, state, kind);
  }
}

/** Decodes one parsed document of `site`. */
export function decodeDocument(root: YNode, site: DocumentSite): DecodedDocument {
  const state: DecodeState = { site, resources: [], diagnostics: [] };
  decodeNode(root, state, 0);
  return state;
}
