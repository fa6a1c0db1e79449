/**
 * Reads a MeshConfig file: the MeshConfig YAML itself (the `mesh` key of the `istio` ConfigMap),
 * the ConfigMap (`kubectl get cm istio -n istio-system -o yaml`), or an `IstioOperator` with
 * `spec.meshConfig`. Every finding has the file's line and the field path; never throws on bad
 * input.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import { DEFAULT_LOAD_LIMITS } from '../load/limits';
import type { LoadLimits } from '../load/limits';
import { parseDocuments } from '../load/parse-documents';
import type { YMapNode, YNode } from '../load/yaml-tree';
import type { SourcePosition } from '../model/meta';
import { MeshDecodeContext, decodeMeshMessage } from './decode-mesh-config';
import type { MeshConfig, MeshConfigExtensionProvider, MeshConfigForm } from './mesh-config';
import { MESH_CONFIG_MESSAGE } from './mesh-config-schema';
import { validateMeshConfig } from './validate-mesh-config';

export interface MeshConfigLoadOptions {
  /** Names the file in diagnostics. */
  readonly sourceName: string;
  /** Overrides of the loader's {@link DEFAULT_LOAD_LIMITS}. */
  readonly limits?: Partial<LoadLimits>;
}

export interface MeshConfigLoadResult {
  /** Present when the file holds a usable MeshConfig (no errors; warnings allowed). */
  readonly meshConfig?: MeshConfig;
  readonly form?: MeshConfigForm;
  readonly diagnostics: readonly Diagnostic[];
}

type PositionMap = (position: SourcePosition) => SourcePosition;

interface Located {
  readonly root: YNode;
  readonly form: MeshConfigForm;
  /** Field path of the MeshConfig inside the document (`spec.meshConfig`), `''` at the root. */
  readonly pathPrefix: string;
  readonly mapPosition: PositionMap;
}

const IDENTITY: PositionMap = (position) => position;

function entry(node: YMapNode, key: string): YNode | undefined {
  return node.entries.find((candidate) => candidate.key === key)?.value;
}

function textOf(node: YNode | undefined): string | undefined {
  return node !== undefined && node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
}

/**
 * Positions inside the `data.mesh` string of a ConfigMap, mapped back to the file: a block
 * scalar (`mesh: |`) starts on the next line at the block's indentation; any other string
 * maps to the value itself.
 */
function embeddedPositions(text: string, value: YNode): PositionMap {
  const lines = text.split('\n');
  const line = lines[value.position.line - 1] ?? '';
  const indicator = line.slice(value.position.column - 1).trimStart()[0];
  if (indicator !== '|' && indicator !== '>') return () => value.position;
  // The block's indentation is that of its first non-blank line; content lines keep the rest.
  const firstContent = lines.slice(value.position.line).find((candidate) => candidate.trim() !== '') ?? '';
  const indent = /^ */u.exec(firstContent)?.[0].length ?? 0;
  return (inner) => ({ line: value.position.line + inner.line, column: inner.column + indent });
}

function diagnostic(options: MeshConfigLoadOptions, severity: Diagnostic['severity'], code: Diagnostic['code'], message: string, position: SourcePosition, path?: string): Diagnostic {
  return { code, severity, origin: 'mesh-config', message, sourceName: options.sourceName, position, ...(path === undefined || path === '' ? {} : { path }) };
}

function notMeshConfig(options: MeshConfigLoadOptions, message: string, position: SourcePosition): { diagnostics: Diagnostic[] } {
  return { diagnostics: [diagnostic(options, 'error', 'MESH_CONFIG_NOT_A_MESH_CONFIG', message, position)] };
}

/** Parses text into at most one document root, reporting YAML problems and extra documents. */
function singleRoot(text: string, options: MeshConfigLoadOptions, limits: LoadLimits, mapPosition: PositionMap): { root?: YNode; diagnostics: Diagnostic[] } {
  const parsed = parseDocuments(text, limits);
  const diagnostics: Diagnostic[] = parsed.problems.map((problem) => ({ ...diagnostic(options, 'error', problem.code, problem.message, mapPosition(problem.position)), origin: 'load' }));
  if (parsed.documents.length > 1) {
    const extra = parsed.documents[1] as (typeof parsed.documents)[number];
    diagnostics.push(diagnostic(options, 'error', 'MESH_CONFIG_NOT_A_MESH_CONFIG', `a mesh config file holds one document, found ${parsed.documents.length}`, mapPosition(extra.position)));
  }
  return { ...(parsed.documents[0] !== undefined ? { root: parsed.documents[0].root } : {}), diagnostics };
}

/** Finds the MeshConfig in a document root: the root itself, a ConfigMap's `data.mesh`, or an IstioOperator's `spec.meshConfig`. */
function locate(text: string, root: YNode, options: MeshConfigLoadOptions, limits: LoadLimits): Located | { diagnostics: Diagnostic[] } {
  if (root.kind !== 'map') return notMeshConfig(options, `a mesh config must be a map of MeshConfig fields, found ${root.kind === 'seq' ? 'a list' : 'a scalar'}`, root.position);
  const kind = textOf(entry(root, 'kind'));
  if (kind === undefined && entry(root, 'apiVersion') === undefined) return { root, form: 'mesh-config', pathPrefix: '', mapPosition: IDENTITY };
  if (kind === 'IstioOperator') {
    const spec = entry(root, 'spec');
    const found = spec !== undefined && spec.kind === 'map' ? entry(spec, 'meshConfig') : undefined;
    if (found === undefined) return notMeshConfig(options, 'the IstioOperator has no spec.meshConfig', (spec ?? root).position);
    return { root: found, form: 'istio-operator', pathPrefix: 'spec.meshConfig', mapPosition: IDENTITY };
  }
  if (kind === 'ConfigMap') {
    const data = entry(root, 'data');
    const mesh = data !== undefined && data.kind === 'map' ? entry(data, 'mesh') : undefined;
    const meshText = textOf(mesh);
    if (mesh === undefined || meshText === undefined) return notMeshConfig(options, 'the ConfigMap has no data.mesh string (the istio ConfigMap of the mesh holds the MeshConfig there)', (mesh ?? data ?? root).position);
    const mapPosition = embeddedPositions(text, mesh);
    const inner = singleRoot(meshText, options, limits, mapPosition);
    if (inner.root === undefined) return inner.diagnostics.length > 0 ? { diagnostics: inner.diagnostics } : { root: { kind: 'map', position: mesh.position, entries: [] }, form: 'config-map', pathPrefix: '', mapPosition: IDENTITY };
    if (inner.diagnostics.length > 0) return { diagnostics: inner.diagnostics };
    return { root: inner.root, form: 'config-map', pathPrefix: '', mapPosition };
  }
  const typeName = kind === undefined ? 'a document with apiVersion but no kind' : `a ${kind}`;
  return notMeshConfig(options, `${typeName} is not a mesh config; expected the MeshConfig YAML, the istio ConfigMap (data.mesh) or an IstioOperator (spec.meshConfig)`, root.position);
}

function providerOf(decoded: Record<string, unknown>): MeshConfigExtensionProvider {
  const kind = (decoded['$kind'] as string | undefined) ?? (decoded['envoyExtAuthzHttp'] !== undefined ? 'envoyExtAuthzHttp' : decoded['envoyExtAuthzGrpc'] !== undefined ? 'envoyExtAuthzGrpc' : undefined);
  const withDefaults = (config: unknown) => ({ service: '', port: 0, ...(config as object) });
  return {
    name: (decoded['name'] as string | undefined) ?? '',
    ...(kind !== undefined ? { kind } : {}),
    ...(decoded['envoyExtAuthzHttp'] !== undefined ? { envoyExtAuthzHttp: withDefaults(decoded['envoyExtAuthzHttp']) } : {}),
    ...(decoded['envoyExtAuthzGrpc'] !== undefined ? { envoyExtAuthzGrpc: withDefaults(decoded['envoyExtAuthzGrpc']) } : {}),
  };
}

/** The decoded fields as the model (aliases kept in file order for validation; sorted afterwards). */
function modelOf(decoded: Record<string, unknown>): MeshConfig {
  const pick = <T>(key: string): Partial<Record<string, T>> => (decoded[key] === undefined ? {} : { [key]: decoded[key] as T });
  const certificates = decoded['caCertificates'] as Array<{ trustDomains?: string[] }> | undefined;
  const providers = decoded['extensionProviders'] as Array<Record<string, unknown>> | undefined;
  return {
    ...pick<string>('rootNamespace'),
    ...pick<string>('trustDomain'),
    ...pick<string[]>('trustDomainAliases'),
    ...(certificates === undefined ? {} : { caCertificateTrustDomains: certificates.flatMap((c) => c.trustDomains ?? []) }),
    ...(providers === undefined ? {} : { extensionProviders: providers.map(providerOf) }),
    ...(decoded['proxyInboundListenPort'] === undefined || decoded['proxyInboundListenPort'] === 0 ? {} : { proxyInboundListenPort: decoded['proxyInboundListenPort'] as number }),
    ...pick<string>('protocolDetectionTimeout'),
    ...(decoded['meshMTLS'] === undefined ? {} : { meshMtls: decoded['meshMTLS'] as MeshConfig['meshMtls'] & object }),
  };
}

/**
 * Loads a mesh config file. Errors (wrong types, invalid trust domains, YAML problems) mean
 * istiod would reject the file: no `meshConfig` is returned. Unknown fields and unusable
 * extension providers are warnings, as istiod ignores them.
 *
 * @example
 * ```ts
 * const { meshConfig, diagnostics } = loadMeshConfig(text, { sourceName: 'mesh.yaml' });
 * meshConfig?.extensionProviders?.[0]?.envoyExtAuthzGrpc?.service;
 * ```
 */
export function loadMeshConfig(text: string, options: MeshConfigLoadOptions): MeshConfigLoadResult {
  if (typeof text !== 'string') throw new TypeError('loadMeshConfig: text must be a string');
  const limits: LoadLimits = { ...DEFAULT_LOAD_LIMITS, ...options.limits };
  const outer = singleRoot(text, options, limits, IDENTITY);
  if (outer.diagnostics.length > 0) return { diagnostics: outer.diagnostics };
  if (outer.root === undefined) return { meshConfig: {}, form: 'mesh-config', diagnostics: [] };
  const located = locate(text, outer.root, options, limits);
  if (!('root' in located)) return { diagnostics: located.diagnostics };
  const context = new MeshDecodeContext();
  const decoded = decodeMeshMessage(MESH_CONFIG_MESSAGE, located.root, '', context);
  const at = (path: string): SourcePosition => located.mapPosition(nearestPosition(context.positions, path) ?? located.root.position);
  const prefixed = (path: string): string => (located.pathPrefix === '' ? path : path === '' ? located.pathPrefix : `${located.pathPrefix}.${path}`);
  const diagnostics: Diagnostic[] = context.issues.map((issue) => diagnostic(options, issue.severity, issue.code, issue.message, located.mapPosition(issue.position), prefixed(issue.path)));
  if (decoded === undefined) return { form: located.form, diagnostics };
  const model = modelOf(decoded);
  const undecodable = new Set(context.issues.filter((issue) => issue.severity === 'error').map((issue) => issue.path));
  for (const finding of validateMeshConfig(model).filter((f) => !undecodable.has(f.path))) diagnostics.push(diagnostic(options, finding.severity, finding.code, finding.message, at(finding.path), prefixed(finding.path)));
  diagnostics.sort((a, b) => (a.position?.line ?? 0) - (b.position?.line ?? 0) || (a.position?.column ?? 0) - (b.position?.column ?? 0));
  if (diagnostics.some((d) => d.severity === 'error')) return { form: located.form, diagnostics };
  const aliases = model.trustDomainAliases === undefined ? {} : { trustDomainAliases: [...new Set(model.trustDomainAliases)].sort() };
  return { meshConfig: { ...model, ...aliases }, form: located.form, diagnostics };
}

/** The position of `path` or of its nearest ancestor that has one. */
function nearestPosition(positions: ReadonlyMap<string, SourcePosition>, path: string): SourcePosition | undefined {
  let current = path;
  for (;;) {
    const position = positions.get(current);
    if (position !== undefined || current === '') return position;
    const cut = Math.max(current.lastIndexOf('.'), current.lastIndexOf('['));
    current = cut <= 0 ? '' : current.slice(0, cut);
  }
}
