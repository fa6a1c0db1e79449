/**
 * Nesting depth of a YAML document measured on the concrete syntax tree, before composing it:
 * the parser is iterative, the composer is recursive, so deep inputs are rejected here first.
 */
import type { CST } from 'yaml';

interface Pending {
  readonly token: CST.Token;
  readonly depth: number;
}

function childrenOf(token: CST.Token): readonly (CST.Token | undefined)[] {
  switch (token.type) {
    case 'document':
      return [token.value];
    case 'block-map':
    case 'flow-collection':
      return token.items.flatMap((item) => [item.key ?? undefined, item.value]);
    case 'block-seq':
      return token.items.map((item) => item.value);
    default:
      return [];
  }
}

function isCollection(token: CST.Token): boolean {
  return token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection';
}

/**
 * The maximum collection nesting of `root`, or `limit + 1` as soon as it exceeds `limit`
 * (the walk stops early, so the cost is bounded by the document size).
 */
export function cstNestingDepth(root: CST.Token, limit: number): number {
  const stack: Pending[] = [{ token: root, depth: 0 }];
  let deepest = 0;
  while (stack.length > 0) {
    const { token, depth: parentDepth } = stack.pop() as Pending;
    const depth = isCollection(token) ? parentDepth + 1 : parentDepth;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return limit + 1;
    for (const child of childrenOf(token)) {
      if (child !== undefined) stack.push({ token: child, depth });
    }
  }
  return deepest;
}
