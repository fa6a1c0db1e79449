import { describe, expect, it } from 'vitest';
import { encodeApplyRequest } from '@ward/etcd/apply';
import { SNAPSHOT_CHUNK_BYTES } from '@ward/etcd/kv-store';
import { EntryType, votersConfState, type Entry } from '@ward/raft/core';
import { joinChunks } from '@ward/shared/binary';
import type { MemberSpec } from './members';
import { StateMachine } from './state-machine';
import { ChunkPool, SNAPSHOT_TURN_BYTES, SnapshotGivenUp, sizeInTurns, snapshotPieces } from './snapshot-turns';

const IDS = [1n, 2n, 3n];
const spec = (id: bigint): MemberSpec => ({ id, name: `m${id}`, peerAddress: `127.0.0.1:${1000 + Number(id)}`, apiAddress: `127.0.0.1:${2000 + Number(id)}` });

const entry = (index: number, operation: Parameters<typeof encodeApplyRequest>[0]['operation']): Entry => ({
  index,
  term: 1,
  type: EntryType.Normal,
  data: encodeApplyRequest({ header: { id: BigInt(index), username: '', authRevision: 0 }, operation }),
});

/** A state machine holding `keys` keys of `valueBytes`-byte values (each written twice: history too). */
function stateOf(keys: number, valueBytes: number): { machine: StateMachine; next: () => number } {
  const machine = StateMachine.boot(
    { applier: {}, maxEntryBytes: 1 << 22, onUndecodable: () => undefined, initialMembers: IDS.map(spec), initialConfState: votersConfState(IDS), clusterId: 7n },
    undefined,
  );
  let index = 0;
  const entries: Entry[] = [];
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < keys; i++) {
      const value = new Uint8Array(valueBytes).fill((i + round) & 0xff);
      entries.push(entry(++index, { type: 'put', request: { key: new TextEncoder().encode(`key-${String(i).padStart(6, '0')}`), value } }));
    }
  }
  machine.apply(entries);
  return { machine, next: () => ++index };
}

/** Sizes a streamed task in turns, as the driver does; its length is then known. */
async function sized(task: ReturnType<StateMachine['snapshotTask']>): Promise<number> {
  expect(await sizeInTurns(task, () => false)).toBe('done');
  return task.sizeBytes!;
}

/** Takes every piece (a copy of each), as a file write would: in order, one at a time. */
async function drain(pieces: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const copies: Uint8Array[] = [];
  for await (const piece of pieces) copies.push(piece.slice());
  return joinChunks(copies);
}

describe('streamed local snapshots (snapshotPieces)', () => {
  it('give the bytes of the whole snapshot, of the announced length, through a pool of a few buffers', async () => {
    // About 25 MB: three times a turn's bytes, so buffers must go round.
    const { machine } = stateOf(40_000, 300);
    const whole = machine.snapshotData();
    const pool = new ChunkPool();
    const distinct = new Set<ArrayBufferLike>();
    const task = machine.snapshotTask({
      nextBuffer: () => {
        const buffer = pool.take();
        distinct.add(buffer.buffer);
        return buffer;
      },
    });
    expect(await sized(task)).toBe(whole.length);
    const bytes = await drain(snapshotPieces(task, pool, () => false));
    expect(Buffer.compare(Buffer.from(bytes), Buffer.from(whole))).toBe(0);
    // Only about a turn's worth of buffers ever existed: each was lent again once written.
    expect(whole.length / SNAPSHOT_CHUNK_BYTES).toBeGreaterThan(3 * (SNAPSHOT_TURN_BYTES / SNAPSHOT_CHUNK_BYTES));
    expect(distinct.size).toBeLessThanOrEqual(SNAPSHOT_TURN_BYTES / SNAPSHOT_CHUNK_BYTES + 4);
  });

  it('keep the state of their moment while entries go on being applied between turns', async () => {
    const { machine, next } = stateOf(5_000, 200);
    const before = machine.snapshotData();
    const pool = new ChunkPool();
    const task = machine.snapshotTask({ nextBuffer: () => pool.take() });
    await sized(task);
    const copies: Uint8Array[] = [];
    for await (const piece of snapshotPieces(task, pool, () => false, 0)) {
      copies.push(piece.slice());
      machine.apply([entry(next(), { type: 'put', request: { key: new TextEncoder().encode(`new-${copies.length}`), value: new Uint8Array(50) } })]);
    }
    expect(Buffer.compare(Buffer.from(joinChunks(copies)), Buffer.from(before))).toBe(0);
    expect(machine.snapshotData().length).toBeGreaterThan(before.length);
  });

  it('are given up when dropped, and when a compaction overtakes them (stale)', async () => {
    const { machine, next } = stateOf(5_000, 200);
    const pool = new ChunkPool();
    let dropped = false;
    const task = machine.snapshotTask({ nextBuffer: () => pool.take() });
    await sized(task);
    const pieces = snapshotPieces(task, pool, () => dropped, 0);
    await pieces.next();
    dropped = true;
    await expect(drain(pieces)).rejects.toEqual(new SnapshotGivenUp('dropped'));

    const staleTask = machine.snapshotTask({ nextBuffer: () => pool.take() });
    await sized(staleTask);
    const stalePieces = snapshotPieces(staleTask, pool, () => false, 0);
    await stalePieces.next();
    machine.apply([entry(next(), { type: 'compact', request: { revision: 100 } })]);
    await expect(drain(stalePieces)).rejects.toEqual(new SnapshotGivenUp('stale'));
  });
});
