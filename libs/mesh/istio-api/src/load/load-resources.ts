/**
 * The loader's public entry: text in, typed resources with positions and diagnostics out.
 * It never throws on bad input.
 */
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { LoadedResource } from '../model/resources';
import { decodeDocument } from '../decode/decode-resource';
import { DEFAULT_LOAD_LIMITS } from './limits';
import type { LoadLimits } from './limits';
import { parseDocuments } from './parse-documents';

export interface LoadOptions {
  /** Names the input in origins and diagnostics: a file path, `-` for stdin, or any label. */
  readonly sourceName: string;
  /** Overrides of {@link DEFAULT_LOAD_LIMITS}. */
  readonly limits?: Partial<LoadLimits>;
}

export interface LoadResult {
  /** Resources that decoded without error, in input order. */
  readonly resources: readonly LoadedResource[];
  /** Everything found while reading, in input order. */
  readonly diagnostics: readonly Diagnostic[];
}

function checkedLimits(overrides: Partial<LoadLimits> | undefined): LoadLimits {
  const limits = { ...DEFAULT_LOAD_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`load limit ${name} must be a positive integer, got ${String(value)}`);
  }
  return limits;
}

/**
 * Loads every document of `text` (multi-document YAML or JSON). AuthorizationPolicy and
 * PeerAuthentication (`security.istio.io/v1`, `v1beta1`) decode into the typed model; v1
 * Namespace and Pod decode as analyzer inventory; `v1 List` items are loaded one by one;
 * other Kubernetes/Istio kinds are skipped with an `info` diagnostic; anything else is an error.
 *
 * @example
 * ```ts
 * const { resources, diagnostics } = loadResources(text, { sourceName: 'policy.yaml' });
 * const policies = resources.filter(isAuthorizationPolicy).map((loaded) => loaded.resource);
 * ```
 */
export function loadResources(text: string, options: LoadOptions): LoadResult {
  if (typeof text !== 'string') throw new TypeError('loadResources: text must be a string');
  const limits = checkedLimits(options.limits);
  const parsed = parseDocuments(text, limits);
  const diagnostics: Diagnostic[] = parsed.problems.map((problem) => ({
    code: problem.code,
    severity: 'error',
    origin: 'load',
    message: problem.message,
    sourceName: options.sourceName,
    position: problem.position,
  }));
  const resources: LoadedResource[] = [];
  for (const document of parsed.documents) {
    const decoded = decodeDocument(document.root, { sourceName: options.sourceName, documentIndex: document.documentIndex });
    resources.push(...decoded.resources);
    diagnostics.push(...decoded.diagnostics);
  }
  return { resources, diagnostics: sortByPosition(diagnostics) };
}

function sortByPosition(diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics
    .map((diagnostic, index) => ({ diagnostic, index }))
    .sort((a, b) => (a.diagnostic.position?.line ?? 0) - (b.diagnostic.position?.line ?? 0) || a.index - b.index)
    .map((entry) => entry.diagnostic);
}
