// A snapshot over the old 1 GiB bound, on a real disk: written streamed and booted from, neither
// ever holding it whole in memory (the boot checks the file in pieces; its data is then read in
// pieces from the file, as the state machine reads it).
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES, RawNode, votersConfState, type Ready } from '@ward/raft/core';
import { SeededRng } from '@ward/shared/clock';
import { RaftPersistence, memberWalMetadata } from '../src/raft-persistence';
import { makeTempDir, type TempDir } from '../src/testing';

let dir: TempDir | undefined;
afterEach(async () => {
  await dir?.remove();
  dir = undefined;
});

it('writes a local snapshot of 1.1 GB from pieces and boots from it', async () => {
  dir = await makeTempDir('ward-large-snapshot-');
  const options = { dir: dir.path, metadata: memberWalMetadata(0xc1n, 1n), bootstrapConfState: votersConfState([1n]), snapshotDataInMemory: false };
  const booted = await RaftPersistence.open(options);
  const node = new RawNode({ id: 1n, storage: booted.storage, rng: new SeededRng(1), applied: 0 });
  const drain = async (): Promise<void> => {
    while (node.hasReady()) {
      const ready: Ready = node.ready();
      await booted.persistence.persist(ready);
      node.advance();
    }
  };
  node.campaign();
  await drain();
  node.propose(new TextEncoder().encode('entry'));
  await drain();
  const index = booted.persistence.storage.lastIndex();
  const total = 1_100_000_000;
  expect(total).toBeGreaterThan(1024 ** 3);
  expect(total).toBeLessThan(MAX_SNAPSHOT_BYTES);
  const piece = new Uint8Array(4 * 1024 * 1024);
  async function* pieces(): AsyncGenerator<Uint8Array> {
    for (let sent = 0; sent < total; ) {
      const length = Math.min(piece.length, total - sent);
      // Each piece marked by its position, so the boot's bytes can be checked where they landed.
      piece.fill(sent / piece.length + 1, 0, length);
      sent += length;
      yield piece.subarray(0, length);
    }
  }
  const snapshot = await booted.persistence.createSnapshotStreamed(index, undefined, total, pieces());
  expect(snapshot?.metadata.index).toBe(index);
  await booted.persistence.close();

  // The process's peak resident memory: a boot that read the file whole would raise it by 1.1 GB.
  const peakBytes = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
  const peakBefore = peakBytes();
  const again = await RaftPersistence.open(options);
  try {
    expect(again.snapshot?.metadata.index).toBe(index);
    expect([again.snapshot!.data.length, again.snapshotBytes]).toEqual([0, total]);
    const { totalBytes, data } = await again.persistence.snapshotData(again.snapshot!);
    expect(totalBytes).toBe(total);
    // Each piece's bytes are where the writer put them: the mark of its 4 MiB piece.
    let offset = 0;
    let misplaced = 0;
    for await (const read of data instanceof Uint8Array ? [data] : data) {
      for (let at = 0; at < read.length; at += 65_536) if (read[at] !== ((Math.floor((offset + at) / piece.length) + 1) & 0xff)) misplaced++;
      offset += read.length;
    }
    expect([offset, misplaced]).toEqual([total, 0]);
    expect(peakBytes() - peakBefore).toBeLessThan(512 * 1024 * 1024);
  } finally {
    await again.persistence.close();
  }
}, 120_000);
