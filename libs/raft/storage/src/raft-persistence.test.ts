import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DECODE_LIMITS, RawNode, encodeSnapshotHead, votersConfState, type Entry, type Ready, type Snapshot } from '@ward/raft/core';
import { SeededRng } from '@ward/shared/clock';
import { hasCode } from '@ward/shared/errors';
import { RaftPersistence, memberWalMetadata, type RaftPersistenceOptions } from './raft-persistence';
import { SnapshotTooLargeError } from './errors';
import { RaftStorage } from './raft-storage';
import { makeTempDir, type TempDir } from './testing';

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('raft-persistence');
});
afterEach(async () => {
  await dir.remove();
});

const CONF = votersConfState([1n]);

function options(extra: Partial<RaftPersistenceOptions> = {}): RaftPersistenceOptions {
  return {
    dir: dir.path,
    metadata: memberWalMetadata(0xc1n, 1n),
    bootstrapConfState: CONF,
    wal: { segmentSizeBytes: 64 * 1024, maxRecordBytes: 4096, maxBatchBytes: 64 * 1024 },
    catchUpEntries: 10,
    ...extra,
  };
}

const data = (i: number): Uint8Array => new TextEncoder().encode(`put k${i} v${i}`);

/** A single-member raft driven through the persistence, Ready by Ready. */
class Member {
  readonly applied: Entry[] = [];
  constructor(
    readonly node: RawNode,
    readonly persistence: RaftPersistence,
  ) {}

  static async boot(extra: Partial<RaftPersistenceOptions> = {}): Promise<Member> {
    const booted = await RaftPersistence.open(options(extra));
    const applied = booted.snapshot?.metadata.index ?? 0;
    const node = new RawNode({ id: 1n, storage: booted.storage, rng: new SeededRng(1), applied });
    return new Member(node, booted.persistence);
  }

  async drain(): Promise<void> {
    while (this.node.hasReady()) {
      const rd: Ready = this.node.ready();
      await this.persistence.persist(rd);
      this.applied.push(...rd.committedEntries);
      this.node.advance();
    }
  }

  async elect(): Promise<void> {
    this.node.campaign();
    await this.drain();
    expect(this.node.isLeader()).toBe(true);
  }

  async propose(from: number, to: number): Promise<void> {
    for (let i = from; i <= to; i++) {
      this.node.propose(data(i));
      if (i % 7 === 0) await this.drain();
    }
    await this.drain();
  }
}

const payloads = (entries: readonly Entry[]): string[] => entries.filter((e) => e.data.length > 0).map((e) => new TextDecoder().decode(e.data));

describe('RaftPersistence', () => {
  it('persists every Ready and rebuilds the core storage at boot: same log, same hard state', async () => {
    const first = await Member.boot();
    await first.elect();
    await first.propose(1, 50);
    expect(payloads(first.applied)).toHaveLength(50);
    const lastIndex = first.persistence.storage.lastIndex();
    const hardState = first.persistence.storage.initialState().hardState;
    await first.persistence.close();

    const booted = await RaftPersistence.open(options());
    expect(booted.storage.lastIndex()).toBe(lastIndex);
    expect(booted.hardState).toEqual(hardState);
    expect(booted.storage.initialState().confState).toEqual(CONF);
    const entries = booted.storage.entries(1, lastIndex + 1, Number.MAX_SAFE_INTEGER);
    expect(payloads(entries)).toEqual(Array.from({ length: 50 }, (_, i) => `put k${i + 1} v${i + 1}`));
    await booted.persistence.close();

    // A restarted member carries on from there: a new term, more commits.
    const second = await Member.boot();
    await second.elect();
    await second.propose(51, 60);
    expect(payloads(second.applied).slice(-10)).toEqual(Array.from({ length: 10 }, (_, i) => `put k${i + 51} v${i + 51}`));
    expect(second.node.status().term).toBeGreaterThan(hardState.term);
    await second.persistence.close();
  });

  it('a local snapshot compacts log and memory, and boot restores from it', async () => {
    const member = await Member.boot();
    await member.elect();
    await member.propose(1, 40);
    const appliedIndex = member.applied.at(-1)!.index;
    const state = new TextEncoder().encode(`state machine at ${appliedIndex}`);
    const snapshot = await member.persistence.createSnapshot(appliedIndex, undefined, state);
    expect(snapshot.metadata).toMatchObject({ index: appliedIndex, confState: CONF });
    expect(member.persistence.storage.firstIndex()).toBe(appliedIndex - 10 + 1);
    await member.propose(41, 45);
    await member.persistence.close();

    const booted = await RaftPersistence.open(options());
    expect(booted.snapshot!.metadata.index).toBe(appliedIndex);
    expect(booted.snapshot!.data).toEqual(state);
    expect(booted.storage.firstIndex()).toBe(appliedIndex + 1);
    expect(payloads(booted.storage.entries(appliedIndex + 1, booted.storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER))).toEqual(
      Array.from({ length: 5 }, (_, i) => `put k${i + 41} v${i + 41}`),
    );
    await booted.persistence.close();
  });

  it('with the data kept on disk: the core keeps a snapshot\'s metadata only, and its data is streamed from the file', async () => {
    const collect = async (member: RaftPersistence, snapshot: Snapshot): Promise<Buffer> => {
      const { totalBytes, data } = await member.snapshotData(snapshot);
      const pieces: Uint8Array[] = [];
      for await (const piece of data instanceof Uint8Array ? [data] : data) pieces.push(piece);
      const joined = Buffer.concat(pieces);
      expect(joined.length).toBe(totalBytes);
      return joined;
    };
    const member = await Member.boot({ snapshotDataInMemory: false });
    await member.elect();
    await member.propose(1, 20);
    const appliedIndex = member.applied.at(-1)!.index;
    const chunks = [new Uint8Array(3000).fill(1), new Uint8Array(0), new Uint8Array(5000).fill(2)];
    // Asked for while the file is being written: the stream waits for it.
    const creating = member.persistence.createSnapshot(appliedIndex, undefined, chunks);
    const core = member.persistence.storage.snapshot();
    expect(core.metadata.index).toBe(appliedIndex);
    expect(core.data.length).toBe(0);
    const streamed = collect(member.persistence, core);
    await creating;
    expect((await streamed).equals(Buffer.concat(chunks))).toBe(true);
    // An installed snapshot too.
    const installed = { data: new TextEncoder().encode('leader state'), metadata: { index: 500, term: 9, confState: votersConfState([1n, 2n, 3n]) } };
    await member.persistence.persist({ softState: undefined, hardState: { term: 9, vote: 0n, commit: 500 }, readStates: [], entries: [], snapshot: installed, committedEntries: [], messages: [], mustSync: false });
    expect(member.persistence.storage.snapshot()).toEqual({ metadata: installed.metadata, data: new Uint8Array(0) });
    expect((await collect(member.persistence, member.persistence.storage.snapshot())).toString()).toBe('leader state');
    await member.persistence.close();
    // At boot neither holds the data: the state machine streams it from the file, as a follower would.
    const booted = await RaftPersistence.open(options({ snapshotDataInMemory: false }));
    expect(booted.snapshot).toEqual({ metadata: installed.metadata, data: new Uint8Array(0) });
    expect(booted.snapshotBytes).toBe(installed.data.length);
    expect(booted.storage.snapshot().data.length).toBe(0);
    expect((await collect(booted.persistence, booted.snapshot!)).toString()).toBe('leader state');
    await booted.persistence.close();
  });

  it("a leader's snapshot received into its file is installed from it: never joined, read back in pieces, booted from", async () => {
    const member = await Member.boot({ snapshotDataInMemory: false });
    await member.elect();
    await member.propose(1, 3);
    const state = new Uint8Array(5000).map((_, i) => i % 251);
    const metadata = { index: 500, term: 9, confState: votersConfState([1n, 2n, 3n]) };
    // A receipt that ends short is refused and leaves nothing to install.
    const short = await member.persistence.receiveSnapshot(metadata, state.length);
    await short.write(state.subarray(0, 100));
    await expect(short.finish()).rejects.toThrow('100 bytes, not the 5000 announced');
    const receipt = await member.persistence.receiveSnapshot(metadata, state.length);
    await expect(receipt.write(new Uint8Array(6000))).rejects.toThrow('more than the 5000 bytes announced');
    const again = await member.persistence.receiveSnapshot(metadata, state.length);
    for (let i = 0; i < state.length; i += 999) await again.write(state.subarray(i, i + 999));
    await again.finish();
    // The core's Ready carries the snapshot without its data (the message arrived without it).
    const installed = { metadata, data: new Uint8Array(0) };
    await member.persistence.persist({ softState: undefined, hardState: { term: 9, vote: 0n, commit: 500 }, readStates: [], entries: [], snapshot: installed, committedEntries: [], messages: [], mustSync: false });
    expect(member.persistence.storage.snapshot()).toEqual(installed);
    const read = async (persistence: RaftPersistence, snapshot: Snapshot): Promise<Buffer> => {
      const { totalBytes, data } = await persistence.snapshotData(snapshot);
      const pieces: Uint8Array[] = [];
      for await (const piece of data instanceof Uint8Array ? [data] : data) pieces.push(piece);
      expect(totalBytes).toBe(state.length);
      return Buffer.concat(pieces);
    };
    expect((await read(member.persistence, installed)).equals(state)).toBe(true);
    // A snapshot whose message carries no data and that was never received cannot be installed.
    const unknown = { metadata: { ...metadata, index: 600 }, data: new Uint8Array(0) };
    await expect(member.persistence.persist({ softState: undefined, hardState: { term: 9, vote: 0n, commit: 600 }, readStates: [], entries: [], snapshot: unknown, committedEntries: [], messages: [], mustSync: false })).rejects.toThrow('was not received');
    await member.persistence.close();
    const booted = await RaftPersistence.open(options({ snapshotDataInMemory: false }));
    expect([booted.snapshot?.metadata, booted.snapshotBytes]).toEqual([metadata, state.length]);
    expect((await read(booted.persistence, booted.snapshot!)).equals(state)).toBe(true);
    await booted.persistence.close();
  });

  it('a streamed local snapshot is written before the core learns of it; boot restores from it; one given up leaves nothing', async () => {
    const { readdir } = await import('node:fs/promises');
    const snapFiles = async (): Promise<string[]> => (await readdir(`${dir.path}/snap`).catch(() => [] as string[])).sort();
    const member = await Member.boot({ snapshotDataInMemory: false, maxSnapshotBytes: 16_000 });
    await member.elect();
    await member.propose(1, 40);
    const appliedIndex = member.applied.at(-1)!.index;
    const before = member.persistence.storage.snapshot().metadata.index;
    const filesBefore = await snapFiles();

    // Given up half-way (the pieces throw): no file, nothing recorded.
    async function* brokenOff(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(100).fill(7);
      throw new Error('given up');
    }
    await expect(member.persistence.createSnapshotStreamed(appliedIndex, undefined, 200, brokenOff())).rejects.toThrow('given up');
    expect(await snapFiles()).toEqual(filesBefore);
    expect(member.persistence.storage.snapshot().metadata.index).toBe(before);
    // Fewer bytes than announced: refused, nothing left either.
    async function* short(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(100);
    }
    await expect(member.persistence.createSnapshotStreamed(appliedIndex, undefined, 200, short())).rejects.toThrow('100 bytes, not the 200 announced');
    expect(await snapFiles()).toEqual(filesBefore);
    // Announced larger than the store takes: refused before a byte is asked for or written.
    let asked = 0;
    async function* neverTaken(): AsyncGenerator<Uint8Array> {
      asked++;
      yield new Uint8Array(1);
    }
    const tooLarge = member.persistence.createSnapshotStreamed(appliedIndex, undefined, 20_000, neverTaken());
    await expect(tooLarge).rejects.toBeInstanceOf(SnapshotTooLargeError);
    await expect(tooLarge).rejects.toMatchObject({ limitBytes: 16_000 });
    expect(asked).toBe(0);
    expect(await snapFiles()).toEqual(filesBefore);
    expect(member.persistence.storage.snapshot().metadata.index).toBe(before);

    // Whole: the core learns of it only once the file is durable (checked from inside the stream).
    const pieces = [new Uint8Array(3000).fill(1), new Uint8Array(0), new Uint8Array(5000).fill(2)];
    async function* whole(persistence: RaftPersistence): AsyncGenerator<Uint8Array> {
      for (const piece of pieces) {
        expect(persistence.storage.snapshot().metadata.index).toBe(before);
        yield piece;
      }
    }
    const snapshot = await member.persistence.createSnapshotStreamed(appliedIndex, undefined, 8000, whole(member.persistence));
    expect(snapshot!.metadata).toMatchObject({ index: appliedIndex, confState: CONF });
    expect(member.persistence.storage.snapshot().metadata.index).toBe(appliedIndex);
    expect(member.persistence.storage.firstIndex()).toBe(appliedIndex - 10 + 1);
    // Not past the core's snapshot: nothing written, nothing recorded.
    const filesAfter = await snapFiles();
    expect(filesAfter).toEqual([expect.stringMatching(/\.snap$/)]);
    expect(await member.persistence.createSnapshotStreamed(appliedIndex, undefined, 1, (async function* () { yield new Uint8Array(1); })())).toBeUndefined();
    expect(await snapFiles()).toEqual(filesAfter);
    await member.propose(41, 45);
    await member.persistence.close();

    const booted = await RaftPersistence.open(options({ snapshotDataInMemory: false }));
    expect(booted.snapshot!.metadata.index).toBe(appliedIndex);
    expect(booted.snapshotBytes).toBe(8000);
    const read: Uint8Array[] = [];
    const { data, checksummed } = await booted.persistence.snapshotData(booted.snapshot!);
    expect(checksummed).toBe(true); // read from the file, whose CRC-32C the iteration checks
    for await (const piece of data instanceof Uint8Array ? [data] : data) read.push(piece);
    expect(Buffer.concat(read).equals(Buffer.concat(pieces))).toBe(true);
    expect(payloads(booted.storage.entries(appliedIndex + 1, booted.storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER))).toEqual(
      Array.from({ length: 5 }, (_, i) => `put k${i + 41} v${i + 41}`),
    );
    await booted.persistence.close();
  });

  it('boots from a snapshot larger than the largest entry (a state of more than 64 MiB)', async () => {
    const member = await Member.boot();
    await member.elect();
    await member.propose(1, 3);
    const appliedIndex = member.applied.at(-1)!.index;
    const state = new Uint8Array(DEFAULT_DECODE_LIMITS.maxDataBytes + 4096).map((_, i) => i % 253);
    await member.persistence.createSnapshot(appliedIndex, undefined, state);
    await member.persistence.close();
    const booted = await RaftPersistence.open(options());
    expect(booted.snapshot!.metadata.index).toBe(appliedIndex);
    expect([booted.snapshot!.data.length, booted.snapshotBytes]).toEqual([state.length, state.length]);
    expect(Buffer.from(booted.snapshot!.data).equals(Buffer.from(state))).toBe(true);
    await booted.persistence.close();
  });

  it('a snapshot file whose content names another position, or announces other than it holds, fails the boot', async () => {
    const member = await Member.boot({ snapshotDataInMemory: false });
    await member.elect();
    await member.propose(1, 3);
    const index = member.applied.at(-1)!.index;
    const term = member.persistence.storage.term(index);
    const state = new Uint8Array(100).fill(5);
    const contents = [
      { head: encodeSnapshotHead({ index: index + 1, term, confState: CONF }, state.length), reason: 'content names another index or term' },
      { head: encodeSnapshotHead({ index, term, confState: CONF }, state.length + 1), reason: 'content announces 101 data bytes' },
      { head: encodeSnapshotHead({ index, term, confState: CONF }, state.length).subarray(0, 10), reason: 'content does not decode' },
    ];
    await member.persistence.close();
    for (const { head, reason } of contents) {
      // Written where the member's own snapshot at that index would be, its marker in the log.
      const { storage } = await RaftStorage.open(options());
      await storage.saveSnapshot({ index, term, data: [head, state] });
      await storage.close();
      const error = await RaftPersistence.open(options({ snapshotDataInMemory: false })).catch((e: unknown) => e);
      expect(hasCode(error, 'ERR_STORAGE_SNAPSHOT_CORRUPT')).toBe(true);
      expect((error as Error).message).toContain(reason);
    }
  });

  it('the catch-up tail behind a snapshot is bounded by bytes as well as by entries; the log segments before it are released', async () => {
    const member = await Member.boot({ catchUpEntries: 1000, catchUpBytes: 2500 });
    await member.elect();
    for (let i = 1; i <= 200; i++) {
      member.node.propose(new Uint8Array(1000).fill(i % 251));
      if (i % 5 === 0) await member.drain();
    }
    await member.drain();
    const appliedIndex = member.applied.at(-1)!.index;
    const segmentsBefore = member.persistence.disk.wal.stats().segmentCount;
    expect(segmentsBefore).toBeGreaterThanOrEqual(3);
    await member.persistence.createSnapshot(appliedIndex, undefined, new TextEncoder().encode('state'));
    // two 1000-byte entries fit in 2,500 bytes, a third does not
    expect(member.persistence.storage.firstIndex()).toBe(appliedIndex - 1);
    expect(member.persistence.disk.wal.stats().segmentCount).toBeLessThanOrEqual(2);
    await member.persistence.close();

    const booted = await RaftPersistence.open(options({ catchUpEntries: 1000, catchUpBytes: 2500 }));
    expect(booted.snapshot!.metadata.index).toBe(appliedIndex);
    expect(booted.storage.lastIndex()).toBe(appliedIndex);
    await booted.persistence.close();
  });

  it('an installed snapshot replaces the log, durably, with its hard state in the same record', async () => {
    const member = await Member.boot();
    await member.elect();
    await member.propose(1, 5);
    const snapshot = { data: new TextEncoder().encode('leader state'), metadata: { index: 500, term: 9, confState: votersConfState([1n, 2n, 3n]) } };
    const install: Ready = {
      softState: undefined,
      hardState: { term: 9, vote: 0n, commit: 500 },
      readStates: [],
      entries: [],
      snapshot,
      committedEntries: [],
      messages: [],
      mustSync: false,
    };
    await member.persistence.persist(install);
    expect(member.persistence.storage.firstIndex()).toBe(501);
    await member.persistence.close();

    const booted = await RaftPersistence.open(options());
    expect(booted.snapshot).toEqual(snapshot);
    expect(booted.hardState).toEqual({ term: 9, vote: 0n, commit: 500 });
    expect(booted.storage.lastIndex()).toBe(500);
    expect(booted.storage.initialState().confState).toEqual(votersConfState([1n, 2n, 3n]));
    await booted.persistence.close();
  });

  it('an installed snapshot without a hard state committing it is a programming error', async () => {
    const member = await Member.boot();
    const bad: Ready = {
      softState: undefined,
      hardState: { term: 9, vote: 0n, commit: 10 },
      readStates: [],
      entries: [],
      snapshot: { data: new Uint8Array(1), metadata: { index: 500, term: 9, confState: CONF } },
      committedEntries: [],
      messages: [],
      mustSync: true,
    };
    await expect(member.persistence.persist(bad)).rejects.toThrow('assertion failed');
    await member.persistence.close();
  });

  it("refuses to open another member's log", async () => {
    const member = await Member.boot();
    await member.persistence.close();
    const error = await RaftPersistence.open(options({ metadata: memberWalMetadata(0xc1n, 2n) })).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_METADATA_MISMATCH')).toBe(true);
  });
});
