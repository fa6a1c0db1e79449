/**
 * Limits on everything the loader reads. Inputs beyond a limit get a diagnostic at a location
 * and are not parsed further, so no input can exhaust memory, the stack or time.
 */
export interface LoadLimits {
  /** One input (a file, stdin or a request body), in UTF-8 bytes. */
  readonly maxSourceBytes: number;
  /** One YAML document. Kubernetes objects are at most ~1.5 MiB in etcd; policies are far smaller. */
  readonly maxDocumentBytes: number;
  /** Documents in one input. */
  readonly maxDocuments: number;
  /** Nested collections in one document (the deepest real policy path is about 8). */
  readonly maxNestingDepth: number;
  /** Nodes visited in one document with aliases expanded (bounds "billion laughs" inputs). */
  readonly maxNodesPerDocument: number;
  /** Items in one list or entries in one map. */
  readonly maxCollectionItems: number;
}

/** The defaults: generous for real policies, small enough to stay fast on two cores. */
export const DEFAULT_LOAD_LIMITS: LoadLimits = Object.freeze({
  maxSourceBytes: 4 * 1024 * 1024,
  maxDocumentBytes: 1024 * 1024,
  maxDocuments: 1_000,
  maxNestingDepth: 64,
  maxNodesPerDocument: 100_000,
  maxCollectionItems: 10_000,
});

/** UTF-8 length of `text` without allocating. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
