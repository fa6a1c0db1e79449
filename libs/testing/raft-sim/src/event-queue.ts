/** Something scheduled at a simulated time; ties are broken by scheduling order. */
export interface Scheduled {
  readonly time: number;
  readonly seq: number;
}

/** A binary min-heap ordered by (time, seq): the simulator's single source of event order. */
export class EventQueue<T extends Scheduled> {
  private readonly heap: T[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(item: T): void {
    const heap = this.heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The earliest item, without removing it. */
  peek(): T | undefined {
    return this.heap[0];
  }

  pop(): T | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}

function before(a: Scheduled, b: Scheduled): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}
