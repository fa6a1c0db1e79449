import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { NodeStatusResponse } from '@ward/etcd/proto';
import { LeaderWatches, type LeaderWatchCall } from './leader-watch';

class FakeCall extends EventEmitter {
  readonly written: NodeStatusResponse[] = [];
  writableLength = 0;
  destroyed = false;
  write(message: NodeStatusResponse): boolean {
    this.written.push(message);
    return true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function watches(max?: number): { watches: LeaderWatches; view: { leader: string; term: number } } {
  const view = { leader: '1', term: 2 };
  const created = new LeaderWatches(() => ({ leader_id: view.leader, raft_term: String(view.term), leader_address: `a-${view.leader}` }), max);
  return { watches: created, view };
}

const settled = (promise: Promise<void>): Promise<string> => promise.then(() => 'ok', (error: Error) => error.message);

describe('LeaderWatches', () => {
  it('sends the Status at once and again at every change, until the watcher goes', async () => {
    const { watches: w, view } = watches();
    const call = new FakeCall();
    const served = settled(w.serve(call as unknown as LeaderWatchCall));
    expect(call.written.map((s) => s.leader_id)).toEqual(['1']);
    view.leader = '0';
    w.changed();
    view.leader = '3';
    view.term = 3;
    w.changed();
    expect(call.written.map((s) => `${s.leader_id}@${s.raft_term}`)).toEqual(['1@2', '0@2', '3@3']);
    call.emit('cancelled');
    expect(await served).toBe('ok');
    w.changed();
    expect(call.written).toHaveLength(3);
    expect(w.watcherCount).toBe(0);
  });

  it('refuses watchers beyond its bound, and every one once closed', async () => {
    const { watches: w } = watches(1);
    const first = settled(w.serve(new FakeCall() as unknown as LeaderWatchCall));
    expect(await settled(w.serve(new FakeCall() as unknown as LeaderWatchCall))).toBe('etcdserver: too many requests');
    w.close();
    expect(await first).toBe('ok');
    expect(await settled(w.serve(new FakeCall() as unknown as LeaderWatchCall))).toBe('etcdserver: server stopped');
  });

  it('resets a watcher that reads nothing while its messages pile up', async () => {
    const { watches: w } = watches();
    const call = new FakeCall();
    const served = settled(w.serve(call as unknown as LeaderWatchCall));
    call.writableLength = 64;
    w.changed();
    expect(await served).toBe('ok');
    expect(call.destroyed).toBe(true);
    expect(w.watcherCount).toBe(0);
  });
});
