// A binary min-heap for domain code that keeps items in deadline or revision order (the
// raft-node's lessor, kv-store's HashKV merge).
/**
 * A binary min-heap; `before(a, b)` is the strict order. Built from `items` in linear time (the
 * array becomes the heap's own). No bound of its own: callers bound what they push.
 */
export class MinHeap<T> {
  private readonly items: T[];

  constructor(
    private readonly before: (a: T, b: T) => boolean,
    items: T[] = [],
  ) {
    this.items = items;
    for (let i = (items.length >>> 1) - 1; i >= 0; i--) this.down(i);
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    let i = items.length;
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      const above = items[parent] as T;
      if (!this.before(item, above)) break;
      items[i] = above;
      i = parent;
    }
    items[i] = item;
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Restores the order after the top item changed in place so that it may come later (a merge's run moved on). */
  topChanged(): void {
    if (this.items.length > 1) this.down(0);
  }

  private down(start: number): void {
    const items = this.items;
    const length = items.length;
    const item = items[start] as T;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && this.before(items[right] as T, items[left] as T)) child = right;
      const below = items[child] as T;
      if (!this.before(below, item)) break;
      items[i] = below;
      i = child;
    }
    items[i] = item;
  }
}
