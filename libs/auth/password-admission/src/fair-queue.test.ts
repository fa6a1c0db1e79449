import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue';

describe('FairQueue', () => {
  it('serves users round-robin, and within a user its addresses round-robin', () => {
    const queue = new FairQueue<string>({ maxQueued: 100, maxQueuedPerUser: 100, maxQueuedPerAddress: 100 });
    for (let i = 0; i < 5; i++) queue.push('root', '10.0.0.1', `root-a${i}`);
    queue.push('root', '10.0.0.2', 'root-b0');
    queue.push('bob', '10.0.0.9', 'bob-0');
    queue.push('carol', '10.0.0.1', 'carol-0');
    expect(queue.drain()).toEqual(['root-a0', 'bob-0', 'carol-0', 'root-b0', 'root-a1', 'root-a2', 'root-a3', 'root-a4']);
  });

  it('a user who arrives behind a flood is served after one turn of the flood, not after all of it', () => {
    const queue = new FairQueue<string>({ maxQueued: 100, maxQueuedPerUser: 100, maxQueuedPerAddress: 100 });
    for (let i = 0; i < 50; i++) queue.push('root', '10.0.0.1', `flood-${i}`);
    queue.shift();
    queue.push('bob', '10.0.0.9', 'bob');
    expect([queue.shift(), queue.shift()]).toEqual(['flood-1', 'bob']);
  });

  it('refuses beyond the total, per-user and per-address bounds', () => {
    const queue = new FairQueue<number>({ maxQueued: 5, maxQueuedPerUser: 2, maxQueuedPerAddress: 3 });
    expect(queue.push('a', 'x', 1)).toBeUndefined();
    expect(queue.push('a', 'y', 2)).toBeUndefined();
    expect(queue.push('a', 'z', 3)).toBe('user-queue-full');
    expect(queue.push('b', 'x', 4)).toBeUndefined();
    expect(queue.push('c', 'x', 5)).toBeUndefined();
    expect(queue.push('d', 'x', 6)).toBe('address-queue-full');
    expect(queue.push('d', 'w', 7)).toBeUndefined();
    expect(queue.push('e', 'v', 8)).toBe('queue-full');
    expect(queue.size).toBe(5);
  });

  it('removes a waiting entry and keeps its counts right', () => {
    const queue = new FairQueue<number>({ maxQueued: 2, maxQueuedPerUser: 2, maxQueuedPerAddress: 2 });
    queue.push('a', 'x', 1);
    queue.push('a', 'x', 2);
    expect(queue.remove('a', 'x', 1)).toBe(true);
    expect(queue.remove('a', 'x', 1)).toBe(false);
    expect(queue.push('b', 'x', 3)).toBeUndefined();
    expect(queue.drain()).toEqual([2, 3]);
    expect(queue.size).toBe(0);
  });
});
