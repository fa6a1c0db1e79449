/**
 * Node identities.
 *
 * Decision: a node id is a `bigint` in [1, 2^64 - 1]. etcd member ids are full unsigned 64-bit
 * integers (random, usually above 2^53), so a JavaScript `number` cannot hold them exactly. A
 * `bigint` keeps them exact, cannot be confused with a log index or a term (both `number`) at
 * compile time, orders naturally with `<`, and maps directly onto the 8-byte little-endian field
 * of the binary codec. The cost is JSON: `bigint` does not serialise, so edges that print ids use
 * {@link formatNodeId} (lower-case hex, as etcd prints member ids) and {@link parseNodeId}.
 * 0 means "no node" ({@link NO_NODE}); ids are never reused.
 */
export type NodeId = bigint;

/** "No node": no leader known, no vote cast. */
export const NO_NODE: NodeId = 0n;

/** Largest valid id: 2^64 - 1. */
export const MAX_NODE_ID: NodeId = (1n << 64n) - 1n;

/** True for a bigint in [1, 2^64 - 1]. */
export function isNodeId(value: unknown): value is NodeId {
  return typeof value === 'bigint' && value > 0n && value <= MAX_NODE_ID;
}

/** Lower-case hex without prefix, as etcd prints member ids (`8e9e05c52164694d`). */
export function formatNodeId(id: NodeId): string {
  return id.toString(16);
}

const HEX_ID = /^[0-9a-f]{1,16}$/;
const DECIMAL_ID = /^[0-9]{1,20}$/;

/**
 * Parses an id written as etcd prints it (hex, optionally `0x`-prefixed) or, with `radix: 10`,
 * as a decimal string. Throws a TypeError for anything that is not a valid non-zero uint64.
 */
export function parseNodeId(text: string, radix: 10 | 16 = 16): NodeId {
  const body = radix === 16 && text.startsWith('0x') ? text.slice(2) : text;
  const pattern = radix === 16 ? HEX_ID : DECIMAL_ID;
  if (!pattern.test(body)) throw new TypeError(`invalid node id ${JSON.stringify(text)} (radix ${radix})`);
  const id = BigInt(radix === 16 ? `0x${body}` : body);
  if (!isNodeId(id)) throw new TypeError(`node id ${JSON.stringify(text)} is outside [1, 2^64 - 1]`);
  return id;
}

/** Numeric order of ids, for sorting: negative, zero or positive. */
export function compareNodeIds(a: NodeId, b: NodeId): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
