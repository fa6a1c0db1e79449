/**
 * Kubernetes object metadata and the selector/target types shared by the Istio security
 * resources (`istio.type.v1beta1`).
 */

/** A 1-based line and column in a source text. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** Where a resource came from: the input's name (a file path, `-` for stdin) and its document. */
export interface ResourceOrigin {
  /** File path as given, `-` for stdin, or a caller-chosen label for in-memory text. */
  readonly sourceName: string;
  /** 0-based index of the YAML document inside the source. */
  readonly documentIndex: number;
  /** Position of the document's first node. */
  readonly position: SourcePosition;
}

/**
 * Positions of every decoded field, keyed by field path in the canonical (JSON) field names,
 * e.g. `spec.rules[2].from[0].source.principals[1]` or `metadata.annotations`.
 */
export type FieldPositions = ReadonlyMap<string, SourcePosition>;

/**
 * The subset of Kubernetes `ObjectMeta` that istiod reads. Absent strings decode as `''`,
 * absent maps as `{}`.
 */
export interface ObjectMeta {
  readonly name: string;
  /** The namespace as written; `''` when the document has none (istioctl then assumes `default`). */
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** RFC 3339 text as written; istiod orders policies by it (oldest first). */
  readonly creationTimestamp?: string;
}

/** `istio.type.v1beta1.WorkloadSelector`. A present selector with no labels selects everything. */
export interface WorkloadSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
}

/** `istio.type.v1beta1.PolicyTargetReference`. Absent strings decode as `''`. */
export interface PolicyTargetReference {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
}
