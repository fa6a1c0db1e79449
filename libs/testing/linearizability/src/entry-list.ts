import { assert } from '@ward/shared/errors';

/** "No entry" in the links. */
export const NONE = -1;

/**
 * The call and return events of one partition in time order, as a doubly linked list over typed
 * arrays that supports removing an operation (its call and its return) and restoring it in LIFO
 * order (dancing links). Operations with an unknown outcome have a call and no return: their
 * return is at +infinity.
 *
 * Order: by time; at equal times calls come before returns (intervals are closed, so operations
 * that touch count as concurrent); ties among calls or among returns by operation index.
 */
export class EntryList {
  /** The sentinel before the first entry. */
  readonly head: number;
  /** Operation of each entry. */
  readonly operationOf: Int32Array;
  /** 1 for a return entry, 0 for a call entry. */
  readonly isReturn: Uint8Array;
  /** Return entry of each operation, or {@link NONE} for an unknown outcome. */
  readonly returnOf: Int32Array;
  /** Call entry of each operation. */
  readonly callOf: Int32Array;
  readonly next: Int32Array;
  readonly prev: Int32Array;

  constructor(callTimes: readonly number[], returnTimes: readonly number[]) {
    const operationCount = callTimes.length;
    assert(returnTimes.length === operationCount, 'EntryList: one return time per operation');
    const events: { time: number; isReturn: number; operation: number }[] = [];
    for (let operation = 0; operation < operationCount; operation++) {
      events.push({ time: callTimes[operation] as number, isReturn: 0, operation });
      const returnTime = returnTimes[operation] as number;
      if (returnTime !== Infinity) events.push({ time: returnTime, isReturn: 1, operation });
    }
    events.sort((a, b) => a.time - b.time || a.isReturn - b.isReturn || a.operation - b.operation);
    const entryCount = events.length;
    this.head = entryCount;
    this.operationOf = new Int32Array(entryCount);
    this.isReturn = new Uint8Array(entryCount);
    this.returnOf = new Int32Array(operationCount).fill(NONE);
    this.callOf = new Int32Array(operationCount).fill(NONE);
    this.next = new Int32Array(entryCount + 1);
    this.prev = new Int32Array(entryCount + 1);
    events.forEach((event, entry) => {
      this.operationOf[entry] = event.operation;
      this.isReturn[entry] = event.isReturn;
      if (event.isReturn === 1) this.returnOf[event.operation] = entry;
      else this.callOf[event.operation] = entry;
    });
    // Links: head -> 0 -> 1 -> ... -> entryCount-1 -> NONE.
    this.next[this.head] = entryCount === 0 ? NONE : 0;
    this.prev[this.head] = NONE;
    for (let entry = 0; entry < entryCount; entry++) {
      this.prev[entry] = entry === 0 ? this.head : entry - 1;
      this.next[entry] = entry + 1 < entryCount ? entry + 1 : NONE;
    }
  }

  /** Unlinks a call entry and, if the operation has one, its return entry. */
  lift(call: number): void {
    this.unlink(call);
    const ret = this.returnOf[this.operationOf[call] as number] as number;
    if (ret !== NONE) this.unlink(ret);
  }

  /** Undoes the most recent {@link lift} not yet undone (it must be the one of `call`). */
  unlift(call: number): void {
    const ret = this.returnOf[this.operationOf[call] as number] as number;
    if (ret !== NONE) this.relink(ret);
    this.relink(call);
  }

  private unlink(entry: number): void {
    const before = this.prev[entry] as number;
    const after = this.next[entry] as number;
    this.next[before] = after;
    if (after !== NONE) this.prev[after] = before;
  }

  private relink(entry: number): void {
    const before = this.prev[entry] as number;
    const after = this.next[entry] as number;
    this.next[before] = entry;
    if (after !== NONE) this.prev[after] = entry;
  }
}
