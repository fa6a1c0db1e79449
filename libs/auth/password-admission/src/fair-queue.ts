// The wait queue in front of the password checks: bounded in total, per user and per client
// address, and served round-robin — over the users with something waiting, and within one user
// over its addresses — so a flood against one user name, or from one address, takes its turn like
// everybody else instead of delaying every login behind it.

export interface FairQueueLimits {
  /** Entries waiting at most, over all callers. */
  readonly maxQueued: number;
  /** Entries of one user name waiting at most. */
  readonly maxQueuedPerUser: number;
  /** Entries of one client address waiting at most. */
  readonly maxQueuedPerAddress: number;
}

export type QueueRefusal = 'queue-full' | 'user-queue-full' | 'address-queue-full';

interface UserLine<T> {
  /** Addresses with entries waiting, in turn order, each with its FIFO. */
  readonly addresses: Map<string, T[]>;
  count: number;
}

/** A bounded round-robin queue keyed by user, then by address. */
export class FairQueue<T> {
  /** Users with entries waiting, in turn order (the head is served next). */
  private readonly users = new Map<string, UserLine<T>>();
  private readonly perAddress = new Map<string, number>();
  private total = 0;

  constructor(readonly limits: FairQueueLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`FairQueue: ${name} must be a non-negative integer, got ${value}`);
    }
  }

  get size(): number {
    return this.total;
  }

  /** Adds `item`, or says which bound refused it. */
  push(user: string, address: string, item: T): QueueRefusal | undefined {
    if (this.total >= this.limits.maxQueued) return 'queue-full';
    const line = this.users.get(user);
    if ((line?.count ?? 0) >= this.limits.maxQueuedPerUser) return 'user-queue-full';
    if ((this.perAddress.get(address) ?? 0) >= this.limits.maxQueuedPerAddress) return 'address-queue-full';
    const target = line ?? { addresses: new Map<string, T[]>(), count: 0 };
    if (line === undefined) this.users.set(user, target);
    const fifo = target.addresses.get(address);
    if (fifo === undefined) target.addresses.set(address, [item]);
    else fifo.push(item);
    target.count += 1;
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    this.total += 1;
    return undefined;
  }

  /** The next entry in turn: the head user's head address's oldest; both move to the back. */
  shift(): T | undefined {
    const first = this.users.entries().next();
    if (first.done === true) return undefined;
    const [user, line] = first.value;
    const head = line.addresses.entries().next().value as [string, T[]];
    const [address, fifo] = head;
    const item = fifo.shift() as T;
    line.addresses.delete(address);
    if (fifo.length > 0) line.addresses.set(address, fifo);
    line.count -= 1;
    this.users.delete(user);
    if (line.count > 0) this.users.set(user, line);
    this.release(address);
    return item;
  }

  /** Removes `item` (it timed out or was cancelled); false when it is not waiting. */
  remove(user: string, address: string, item: T): boolean {
    const line = this.users.get(user);
    const fifo = line?.addresses.get(address);
    const index = fifo?.indexOf(item) ?? -1;
    if (line === undefined || fifo === undefined || index < 0) return false;
    fifo.splice(index, 1);
    if (fifo.length === 0) line.addresses.delete(address);
    line.count -= 1;
    if (line.count === 0) this.users.delete(user);
    this.release(address);
    return true;
  }

  /** Every waiting entry, removed. */
  drain(): T[] {
    const items: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) items.push(item);
    return items;
  }

  private release(address: string): void {
    const count = (this.perAddress.get(address) ?? 1) - 1;
    if (count === 0) this.perAddress.delete(address);
    else this.perAddress.set(address, count);
    this.total -= 1;
  }
}
