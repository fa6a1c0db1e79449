// What the kv-store benchmarks share: the same keys in the same orders, so figures compare.

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A deterministic shuffle (xorshift) so that runs compare. */
export function shuffled(count: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  let state = 0x9e3779b9;
  for (let i = count - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** etcd-style keys: /registry/pods/<namespace>/<name>, 35 bytes, 1000 keys per namespace. */
export function keyText(i: number): string {
  return `/registry/pods/ns-${String(Math.floor(i / 1000)).padStart(4, '0')}/pod-${String(i).padStart(8, '0')}`;
}
