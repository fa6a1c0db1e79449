import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKUP_ALIGN_BYTES, BACKUP_CHECKSUM_BYTES, BACKUP_HEADER_BYTES, BackupDigest, BackupFileError, backupFileBytes, backupFilePieces, backupFileStream, backupState, bytesSource, decodeBackup, encodeBackup, verifyBackup, type BackupSource } from './backup-file';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';

const state = (length: number): Uint8Array => Uint8Array.from({ length }, (_, i) => (i * 7 + 3) % 251);
const backup = (length: number) => ({ index: 1234, term: 7, revision: 99, clusterId: 0xfedcba9876543210n, state: state(length) });

/** `file` as a source that logs every read it serves. */
function loggedSource(file: Uint8Array): { source: BackupSource; reads: Array<{ offset: number; length: number }> } {
  const whole = bytesSource(file);
  const reads: Array<{ offset: number; length: number }> = [];
  const source: BackupSource = {
    size: whole.size,
    read: (offset, length) => {
      reads.push({ offset, length });
      return whole.read(offset, length);
    },
  };
  return { source, reads };
}

describe('backup file', () => {
  it.each([0, 1, 512 - BACKUP_HEADER_BYTES, 512 - BACKUP_HEADER_BYTES + 1, 100_000])('round-trips a %i-byte state in n * 512 + 32 bytes', async (length) => {
    const file = encodeBackup(backup(length));
    expect((file.length - BACKUP_CHECKSUM_BYTES) % BACKUP_ALIGN_BYTES).toBe(0);
    expect(file.length).toBe(Math.ceil((BACKUP_HEADER_BYTES + length) / 512) * 512 + 32);
    expect(file.subarray(0, 8).toString('latin1')).toBe('WARDBKUP');
    const padded = file.length - 32;
    expect(file.subarray(padded).equals(createHash('sha256').update(file.subarray(0, padded)).digest())).toBe(true);
    const decoded = await decodeBackup(file);
    expect(decoded).toEqual({ index: 1234, term: 7, revision: 99, clusterId: 0xfedcba9876543210n, state: state(length) });
  });

  it('is streamed from a state in chunks, in pieces of at most the size asked, to the same bytes', async () => {
    const whole = backup(70_000);
    const chunks = [whole.state.subarray(0, 10), whole.state.subarray(10, 10), whole.state.subarray(10, 40_000), whole.state.subarray(40_000)];
    const pieces = [...backupFilePieces(whole, chunks, 4096)];
    expect(pieces.every((piece) => piece.length > 0 && piece.length <= 4096)).toBe(true);
    const file = Buffer.concat(pieces);
    expect(file.length).toBe(backupFileBytes(70_000));
    expect(file.equals(encodeBackup(whole))).toBe(true);
    expect(await decodeBackup(file)).toEqual({ index: 1234, term: 7, revision: 99, clusterId: 0xfedcba9876543210n, state: state(70_000) });
  });

  async function* fromChunks(chunks: readonly Uint8Array[], seen: number[] = []): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) {
      seen.push(chunk.length);
      yield chunk;
    }
  }

  it('is streamed from a state made as it is read, to the same bytes, a chunk asked for only once the previous one was taken', async () => {
    const whole = backup(70_000);
    // One reused buffer, as a streamed snapshot's pool hands out: each chunk overwrites the last.
    const reused = new Uint8Array(30_000);
    const asked: number[] = [];
    async function* refilled(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < 70_000; offset += reused.length) {
        const length = Math.min(reused.length, 70_000 - offset);
        reused.set(whole.state.subarray(offset, offset + length));
        asked.push(offset);
        yield reused.subarray(0, length);
      }
    }
    const copies: Buffer[] = [];
    for await (const piece of backupFileStream(whole, 70_000, refilled(), 4096)) {
      expect(piece.length).toBeGreaterThan(0);
      expect(piece.length).toBeLessThanOrEqual(4096);
      copies.push(Buffer.from(piece));
    }
    expect(asked).toEqual([0, 30_000, 60_000]);
    expect(Buffer.concat(copies).equals(encodeBackup(whole))).toBe(true);
  });

  it('refuses a streamed state longer or shorter than its header says, before a byte too many goes out', async () => {
    const whole = backup(10_000);
    const drain = async (stateLength: number, chunks: Uint8Array[]): Promise<{ bytes: number; error: unknown }> => {
      let bytes = 0;
      try {
        for await (const piece of backupFileStream(whole, stateLength, fromChunks(chunks), 1024)) bytes += piece.length;
      } catch (error) {
        return { bytes, error };
      }
      return { bytes, error: undefined };
    };
    const longer = await drain(9_000, [whole.state.subarray(0, 5_000), whole.state.subarray(5_000)]);
    expect(String(longer.error)).toMatch(/ran past the 9000 bytes/);
    expect(longer.bytes).toBe(BACKUP_HEADER_BYTES + 5_000);
    const shorter = await drain(10_001, [whole.state]);
    expect(String(shorter.error)).toMatch(/ended after 10000 of the 10001 bytes/);
    expect(shorter.bytes).toBe(BACKUP_HEADER_BYTES + 10_000);
    const exact = await drain(10_000, [whole.state.subarray(0, 1), whole.state.subarray(1)]);
    expect(exact).toEqual({ bytes: backupFileBytes(10_000), error: undefined });
  });

  it('refuses a truncated file', async () => {
    const file = encodeBackup(backup(2000));
    for (const cut of [1, 32, 512, 513]) {
      await expect(decodeBackup(file.subarray(0, file.length - cut))).rejects.toThrow(BackupFileError);
    }
    await expect(decodeBackup(file.subarray(0, file.length - 1))).rejects.toThrow(/not a multiple of 512/);
    await expect(decodeBackup(file.subarray(0, file.length - 512))).rejects.toThrow(/checksum mismatch/);
  });

  it('refuses any flipped byte after the magic', async () => {
    const file = encodeBackup(backup(700));
    for (const offset of [8, 16, 40, 64, 700, file.length - 40, file.length - 1]) {
      const damaged = Buffer.from(file);
      damaged[offset]! ^= 0x01;
      await expect(decodeBackup(damaged), `offset ${offset}`).rejects.toThrow(/checksum mismatch/);
    }
  });

  it('refuses a file that is not a ward snapshot (an etcd bbolt file has the same size rule)', async () => {
    const bolt = Buffer.alloc(4 * 4096 + 32);
    bolt.writeUInt32LE(0xed0cdaed, 16); // bbolt's meta page magic
    createHash('sha256').update(bolt.subarray(0, bolt.length - 32)).digest().copy(bolt, bolt.length - 32);
    await expect(decodeBackup(bolt)).rejects.toThrow(/not a ward snapshot/);
    await expect(decodeBackup(Buffer.alloc(0))).rejects.toThrow(/not a ward snapshot/);
  });

  it('refuses an unknown version, a state length past the file, and non-zero padding, even with a valid checksum', async () => {
    const reseal = (mutate: (file: Buffer) => void): Buffer => {
      const file = Buffer.from(encodeBackup(backup(10)));
      mutate(file);
      const padded = file.length - 32;
      createHash('sha256').update(file.subarray(0, padded)).digest().copy(file, padded);
      return file;
    };
    await expect(decodeBackup(reseal((f) => f.writeUInt32LE(3, 8)))).rejects.toThrow(/version 3/);
    expect((await decodeBackup(reseal((f) => f.writeUInt32LE(1, 8)))).state).toEqual(state(10));
    await expect(decodeBackup(reseal((f) => f.writeBigUInt64LE(10_000n, 48)))).rejects.toThrow(/does not fit/);
    await expect(decodeBackup(reseal((f) => (f[BACKUP_HEADER_BYTES + 20] = 1)))).rejects.toThrow(/padding/);
    await expect(decodeBackup(reseal((f) => f.writeBigUInt64LE(2n ** 60n, 16)))).rejects.toThrow(/out of range/);
  });

  it('is checked and its state read in pieces of at most the size asked, never whole', async () => {
    const file = encodeBackup(backup(10_000));
    const { source, reads } = loggedSource(file);
    const layout = await verifyBackup(source, 1000);
    expect(layout).toEqual({ version: 2, stateBytes: 10_000, index: 1234, term: 7, revision: 99, clusterId: 0xfedcba9876543210n });
    const pieces: Uint8Array[] = [];
    for await (const piece of backupState(source, layout, 1000)) pieces.push(piece);
    expect(pieces.map((piece) => piece.length)).toEqual(Array.from({ length: 10 }, () => 1000));
    expect(Buffer.concat(pieces).equals(Buffer.from(state(10_000)))).toBe(true);
    expect(Math.max(...reads.map((read) => read.length))).toBe(1000);
  });

  it('checks its SHA-256 fed in order by a reader, reading only what was not fed', async () => {
    const file = encodeBackup(backup(10_000));
    const { source, reads } = loggedSource(file);
    const fed = new BackupDigest();
    fed.add(file.subarray(0, 3000));
    fed.add(file.subarray(3000, 7000));
    await fed.finish(source, 2048);
    // The rest from byte 7000 on, then the stored checksum.
    expect(reads.map((read) => read.offset)).toEqual([7000, 9048, file.length - BACKUP_CHECKSUM_BYTES]);
    const wrong = new BackupDigest();
    wrong.add(Buffer.from(file.subarray(0, 100)).fill(0, 99));
    await expect(wrong.finish(source)).rejects.toThrow(/checksum mismatch/);
    const skipped = new BackupDigest();
    skipped.add(file.subarray(1, 101));
    await expect(skipped.finish(source)).rejects.toThrow(/checksum mismatch/);
  });

  it('refuses a file larger than any snapshot from its size, before reading past the header', async () => {
    const header = encodeBackup(backup(0)).subarray(0, BACKUP_HEADER_BYTES);
    const reads: number[] = [];
    const size = backupFileBytes(MAX_SNAPSHOT_BYTES) + BACKUP_ALIGN_BYTES;
    const huge: BackupSource = {
      size,
      read: async (offset, length) => {
        reads.push(offset);
        return header.slice(offset, offset + length);
      },
    };
    await expect(verifyBackup(huge)).rejects.toThrow(`${size} bytes is larger than any ward snapshot`);
    expect(reads).toEqual([0]);
    // The largest allowed state is past what one read of a file may be (2 GiB - 1 in Node.js).
    expect(MAX_SNAPSHOT_BYTES).toBeGreaterThan(2 ** 31);
  });
});

