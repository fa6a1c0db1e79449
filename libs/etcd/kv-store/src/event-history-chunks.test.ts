import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { EVENT_CHUNK_EVENTS, EventHistory } from './event-history';
import { KeyRecord } from './key-record';
import type { KeySpan } from './key-span';
import { NO_LEASE } from './types';

// The chunked log against the plainest one (two arrays, nothing ever released): the same events,
// floors and continuation revisions through appends, trims and compactions that cross chunk
// boundaries, including the log emptied and started again.

const ALL: KeySpan = { start: '', end: null };

interface ModelEvent {
  readonly key: string;
  readonly record: KeyRecord;
}

class ModelHistory {
  events: ModelEvent[] = [];
  floor: number;
  constructor(floor: number) {
    this.floor = floor;
  }
  append(key: string, record: KeyRecord): void {
    this.events.push({ key, record });
  }
  private dropBefore(revision: number): void {
    const kept = this.events.filter((event) => event.record.modRevision >= revision);
    if (kept.length < this.events.length) this.floor = Math.max(this.floor, this.events[this.events.length - kept.length - 1]!.record.modRevision + 1);
    this.events = kept;
  }
  trim(maxEvents: number): void {
    if (this.events.length <= maxEvents) return;
    const newest = this.events[this.events.length - 1]!.record.modRevision;
    while (this.events.length > maxEvents && this.events[0]!.record.modRevision !== newest) this.dropBefore(this.events[0]!.record.modRevision + 1);
  }
  compact(revision: number): void {
    if (revision <= this.floor) return;
    this.dropBefore(revision);
    this.floor = revision;
  }
  read(fromRevision: number, maxEvents: number, currentRevision: number): { revisions: string[]; nextRevision: number } {
    const revisions: string[] = [];
    let previous: KeyRecord | undefined;
    for (const { record } of this.events) {
      if (record.modRevision < fromRevision) continue;
      if (revisions.length >= maxEvents && record.modRevision !== previous!.modRevision) return { revisions, nextRevision: record.modRevision };
      revisions.push(`${record.modRevision}.${record.subRevision}`);
      previous = record;
    }
    return { revisions, nextRevision: Math.max(fromRevision, currentRevision + 1) };
  }
}

function readRevisions(history: EventHistory, fromRevision: number, maxEvents: number, currentRevision: number): { revisions: string[]; nextRevision: number } {
  const { events, nextRevision } = history.read(fromRevision, ALL, false, maxEvents, currentRevision, 0);
  return { revisions: events.map((event) => `${event.revision}.${event.subRevision}`), nextRevision };
}

function heldKeys(history: EventHistory): string[] {
  const keys: string[] = [];
  history.forEach((key) => keys.push(key));
  return keys;
}

describe('EventHistory in chunks', () => {
  it('holds, reads and drops exactly what a plain log does across chunk boundaries', () => {
    for (const seed of [1, 2, 3]) {
      const rng = new SeededRng(seed);
      const history = new EventHistory(1);
      const model = new ModelHistory(1);
      let revision = 1;
      for (let step = 0; step < 400; step++) {
        // A revision of 1 to 300 changes (a txn can be larger than a chunk's remainder).
        revision++;
        const changes = 1 + rng.nextInt(rng.nextInt(10) === 0 ? 3 * EVENT_CHUNK_EVENTS : 300);
        for (let sub = 0; sub < changes; sub++) {
          const record = new KeyRecord('v', revision, sub, revision, 1, NO_LEASE, null);
          const key = `k${revision}/${sub}`;
          history.append(key, record);
          model.append(key, record);
        }
        const action = rng.nextInt(8);
        if (action === 0) {
          const bound = 1 + rng.nextInt(4 * EVENT_CHUNK_EVENTS);
          history.trim(bound);
          model.trim(bound);
        } else if (action === 1) {
          // Up to past the newest revision: the log empties and starts again.
          const to = history.floorRevision + rng.nextInt(revision - history.floorRevision + 2);
          history.compact(to);
          model.compact(to);
        }
        expect(history.size).toBe(model.events.length);
        expect(history.floorRevision).toBe(model.floor);
        if (step % 20 === 0 || action < 2) {
          const from = history.floorRevision + rng.nextInt(Math.max(1, revision - history.floorRevision + 1));
          const maxEvents = 1 + rng.nextInt(2 * EVENT_CHUNK_EVENTS);
          expect(readRevisions(history, from, maxEvents, revision)).toEqual(model.read(from, maxEvents, revision));
          expect(heldKeys(history)).toEqual(model.events.map((event) => event.key));
        }
      }
    }
  });

  it('takes an ordered log of several chunks whole and goes on appending after it', () => {
    const count = 2 * EVENT_CHUNK_EVENTS + 5;
    const records = Array.from({ length: count }, (_, i) => new KeyRecord('v', 10 + i, 0, 10 + i, 1, NO_LEASE, null));
    const keys = records.map((_, i) => `k${i}`);
    const history = EventHistory.fromOrdered(10, keys, records);
    expect(history.size).toBe(count);
    history.append('next', new KeyRecord('v', 10 + count, 0, 10 + count, 1, NO_LEASE, null));
    expect(heldKeys(history)).toEqual([...keys, 'next']);
    const from = 10 + EVENT_CHUNK_EVENTS - 1;
    expect(readRevisions(history, from, 3, 10 + count).revisions).toEqual([`${from}.0`, `${from + 1}.0`, `${from + 2}.0`]);
    history.compact(10 + EVENT_CHUNK_EVENTS + 1);
    expect(history.size).toBe(count + 1 - EVENT_CHUNK_EVENTS - 1);
    expect(heldKeys(history)[0]).toBe(`k${EVENT_CHUNK_EVENTS + 1}`);
  });
});
