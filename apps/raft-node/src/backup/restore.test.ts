import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Applier, toPasswordHash, type ApplyOperation } from '@ward/etcd/apply';
import { votersConfState } from '@ward/raft/core';
import { RaftPersistence, memberWalMetadata } from '@ward/raft/storage';
import { crc32c } from '@ward/shared/checksum';
import { BACKUP_HEADER_BYTES, bytesSource, encodeBackup, verifyBackup } from './backup-file';
import { parseRestoreArgs, readAgain, restoreMember, runRestoreCommand, RestoreError } from './restore';
import { clusterIdOf, parseMembers } from '../members';
import { decodeNodeSnapshot, encodeNodeSnapshot } from '../membership/codec';
import { MemberList } from '../membership/member-list';

const MEMBERS = parseMembers(['1=a=127.0.0.1:1=127.0.0.1:2', '2=b=127.0.0.1:3=127.0.0.1:4', '3=c=127.0.0.1:5=127.0.0.1:6']);

function sourceState(): { bytes: Uint8Array; hash: string; appliedIndex: number } {
  const applier = Applier.create();
  const put = (index: number, key: string, value: string): void => {
    const result = applier.apply(index, { header: { id: BigInt(index), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: Buffer.from(key), value: Buffer.from(value) } } });
    expect(result.ok).toBe(true);
  };
  put(5, 'foo', 'bar');
  put(9, 'foo', 'baz');
  return { bytes: applier.snapshot(), hash: applier.stateHash(), appliedIndex: applier.appliedIndex };
}

describe('snapshot-restore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ward-restore-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a data dir that boots at the backup index with the new members as voters and the same state', async () => {
    const source = sourceState();
    const file = join(dir, 'backup.db');
    await writeFile(file, encodeBackup({ index: 12, term: 4, revision: 3, clusterId: 77n, state: source.bytes }));
    const result = await restoreMember({ file, dataDir: join(dir, 'node-2'), memberId: 2n, members: MEMBERS });
    expect(result.newClusterId).toBe(clusterIdOf([1n, 2n, 3n]));
    expect(result.sourceClusterId).toBe(77n);
    expect((await readdir(dir)).sort()).toEqual(['backup.db', 'node-2']);
    const booted = await RaftPersistence.open({ dir: join(dir, 'node-2'), metadata: memberWalMetadata(result.newClusterId, 2n), bootstrapConfState: votersConfState([1n, 2n, 3n]) });
    try {
      expect(booted.snapshot?.metadata).toEqual({ index: 12, term: 1, confState: votersConfState([1n, 2n, 3n]) });
      expect(booted.hardState).toEqual({ term: 1, vote: 0n, commit: 12 });
      const restored = decodeNodeSnapshot(booted.snapshot!.data);
      expect(Applier.restore(restored.applier).stateHash()).toBe(source.hash);
      expect(restored.members?.members).toEqual(MEMBERS.map((m) => ({ ...m, isLearner: false })));
      expect(restored.clusterId).toBe(result.newClusterId);
    } finally {
      await booted.persistence.close();
    }
    // The WAL belongs to member 2 of the new cluster only.
    await expect(RaftPersistence.open({ dir: join(dir, 'node-2'), metadata: memberWalMetadata(result.newClusterId, 1n) })).rejects.toThrow();
  });

  it("restores a backup whose state carries the source cluster's member list (with a learner); the new members replace it", async () => {
    const source = sourceState();
    const sourceMembers = MemberList.of([{ id: 9n, name: 'old', peerAddress: '10.0.0.1:2380', apiAddress: '10.0.0.1:2379', isLearner: false }, { id: 10n, name: 'new', peerAddress: '10.0.0.2:2380', apiAddress: '10.0.0.2:2379', isLearner: true }], [8n]);
    const state = encodeNodeSnapshot({ clusterId: 77n, members: sourceMembers, applier: source.bytes });
    const file = join(dir, 'v2.db');
    await writeFile(file, encodeBackup({ index: 12, term: 4, revision: 3, clusterId: 77n, state }));
    const result = await restoreMember({ file, dataDir: join(dir, 'node-3'), memberId: 3n, members: MEMBERS });
    const booted = await RaftPersistence.open({ dir: join(dir, 'node-3'), metadata: memberWalMetadata(result.newClusterId, 3n) });
    try {
      const restored = decodeNodeSnapshot(booted.snapshot!.data);
      expect(Applier.restore(restored.applier).stateHash()).toBe(source.hash);
      expect(restored.members?.members.map((m) => m.id)).toEqual([1n, 2n, 3n]);
      expect(restored.members?.removed).toEqual([]);
    } finally {
      await booted.persistence.close();
    }
  });

  it('restores a state of several MiB, read and written in pieces, to the bytes a whole encoding gives', async () => {
    const applier = Applier.create();
    const value = Buffer.alloc(1024, 7);
    for (let i = 1; i <= 4000; i++) {
      const result = applier.apply(i, { header: { id: BigInt(i), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: Buffer.from(`key/${i}`), value } } });
      expect(result.ok).toBe(true);
    }
    const state = applier.snapshot();
    expect(state.length).toBeGreaterThan(4_000_000);
    const file = join(dir, 'large.db');
    await writeFile(file, encodeBackup({ index: 4000, term: 3, revision: 4001, clusterId: 5n, state }));
    const result = await restoreMember({ file, dataDir: join(dir, 'node-1'), memberId: 1n, members: MEMBERS });
    const booted = await RaftPersistence.open({ dir: join(dir, 'node-1'), metadata: memberWalMetadata(result.newClusterId, 1n) });
    try {
      expect(booted.snapshot?.metadata.index).toBe(4000);
      const expected = encodeNodeSnapshot({ clusterId: result.newClusterId, members: MemberList.initial(MEMBERS), applier: state });
      expect(Buffer.from(booted.snapshot!.data).equals(Buffer.from(expected))).toBe(true);
    } finally {
      await booted.persistence.close();
    }
  });

  it('drops the simple tokens of the state (the restored cluster starts with none), keeping users and keys', async () => {
    const applier = Applier.create();
    let index = 0;
    const run = (operation: ApplyOperation, username = ''): unknown => {
      const result = applier.apply(++index, { header: { id: BigInt(index), username, authRevision: applier.authView.revision }, operation });
      if (!result.ok) throw new Error(result.error.message);
      return result.result.response;
    };
    run({ type: 'userAdd', request: { name: 'root', passwordHash: toPasswordHash(new TextEncoder().encode('$2b$04$abcdefghijklmnopqrstuu5s2cU6T.bzlNqQ7Y9bIfgGpChD/T3Ju')), noPassword: false } });
    run({ type: 'userGrantRole', request: { user: 'root', role: 'root' } });
    run({ type: 'authEnable' });
    run({ type: 'put', request: { key: Buffer.from('k'), value: Buffer.from('v') } }, 'root');
    const { token } = run({ type: 'authenticate', request: { name: 'root', simpleTokenPrefix: 'abcdefghijklmnop' } }) as { token: string };
    expect(applier.resolveSimpleToken(token)).toMatchObject({ username: 'root' });
    const file = join(dir, 'tokens.db');
    await writeFile(file, encodeBackup({ index, term: 2, revision: 2, clusterId: 1n, state: applier.snapshot() }));
    const result = await restoreMember({ file, dataDir: join(dir, 'node-1'), memberId: 1n, members: MEMBERS });
    const booted = await RaftPersistence.open({ dir: join(dir, 'node-1'), metadata: memberWalMetadata(result.newClusterId, 1n) });
    try {
      expect(booted.snapshot?.metadata.index).toBe(index + 1);
      const restored = Applier.restore(decodeNodeSnapshot(booted.snapshot!.data).applier);
      expect(restored.resolveSimpleToken(token)).toBeUndefined();
      expect([...restored.simpleTokens()]).toEqual([]);
      expect(restored.authView.passwordCheckInput('root')).toBeDefined();
      expect(restored.keySpaceView.currentRevision).toBe(2);
      // The key space was copied from the file, the parts around it encoded from the state with its
      // tokens dropped: together, the canonical bytes an encode of the restored state gives.
      expect(Buffer.from(restored.snapshot()).equals(decodeNodeSnapshot(booted.snapshot!.data).applier)).toBe(true);
      expect(restored.appliedIndex).toBe(index + 1);
    } finally {
      await booted.persistence.close();
    }
  });

  it('refuses damaged, foreign and inconsistent files, a non-empty dir and an unknown member, writing nothing', async () => {
    const source = sourceState();
    const good = encodeBackup({ index: 12, term: 4, revision: 3, clusterId: 77n, state: source.bytes });
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['truncated', good.subarray(0, good.length - 100), /not a multiple of 512/],
      ['flipped', Buffer.from(good).fill(1, 70, 71), /checksum mismatch/],
      // The header's term: the layout and the state still read, and the checksum fed with them refuses the file.
      ['flipped term', Buffer.from(good).fill(9, 24, 25), /checksum mismatch/],
      // Damage the header's later checks or the padding check would name: the checksum's verdict comes first.
      ['flipped version', Buffer.from(good).fill(9, 8, 9), /checksum mismatch/],
      ['flipped padding', Buffer.from(good).fill(1, good.length - 40, good.length - 39), /checksum mismatch/],
      ['etcd', Buffer.alloc(512 * 8 + 32), /not a ward snapshot/],
      ['garbage state', encodeBackup({ index: 12, term: 4, revision: 3, clusterId: 77n, state: Buffer.from('not an applier snapshot') }), /does not restore/],
      ['index behind state', encodeBackup({ index: source.appliedIndex - 1, term: 4, revision: 3, clusterId: 77n, state: source.bytes }), /past the header's index/],
    ];
    for (const [name, bytes, message] of cases) {
      const file = join(dir, `${name}.db`);
      await writeFile(file, bytes);
      await expect(restoreMember({ file, dataDir: join(dir, `out-${name}`), memberId: 1n, members: MEMBERS }), name).rejects.toThrow(message);
    }
    const file = join(dir, 'good.db');
    await writeFile(file, good);
    await mkdir(join(dir, 'busy'));
    await writeFile(join(dir, 'busy', 'x'), 'x');
    await expect(restoreMember({ file, dataDir: join(dir, 'busy'), memberId: 1n, members: MEMBERS })).rejects.toThrow(RestoreError);
    await expect(restoreMember({ file, dataDir: join(dir, 'out-4'), memberId: 4n, members: MEMBERS })).rejects.toThrow(/not in the member list/);
    expect((await readdir(dir)).filter((name) => name.startsWith('out-') || name.startsWith('.'))).toEqual([]);
    expect(await readdir(join(dir, 'busy'))).toEqual(['x']);
  });

  it('reads a range of the state again only as it was when decoded, checked piece by piece', async () => {
    const state = Buffer.alloc(10_000);
    for (let i = 0; i < state.length; i++) state[i] = (i * 7) % 251;
    const file = Buffer.from(encodeBackup({ index: 3, term: 1, revision: 2, clusterId: 1n, state }));
    const source = bytesSource(file);
    const layout = await verifyBackup(source);
    const pieceChecksums: number[] = [];
    for (let offset = BACKUP_HEADER_BYTES; offset < BACKUP_HEADER_BYTES + state.length; offset += 1000) pieceChecksums.push(crc32c(file.subarray(offset, Math.min(offset + 1000, BACKUP_HEADER_BYTES + state.length))));
    const read = async (range: { offset: number; length: number }): Promise<Buffer> => {
      const pieces: Uint8Array[] = [];
      // Each piece is a view of one buffer, valid until the next is asked for: kept as a copy.
      for await (const piece of readAgain(source, layout, { pieceBytes: 1000, sums: pieceChecksums }, range)) pieces.push(piece.slice());
      return Buffer.concat(pieces);
    };
    // Across pieces, from inside one to inside another; a whole state; an empty range.
    for (const range of [{ offset: BACKUP_HEADER_BYTES + 1500, length: 5000 }, { offset: BACKUP_HEADER_BYTES, length: state.length }, { offset: BACKUP_HEADER_BYTES + 10, length: 0 }]) {
      expect((await read(range)).equals(file.subarray(range.offset, range.offset + range.length))).toBe(true);
    }
    await expect(read({ offset: 10, length: 100 })).rejects.toThrow(/outside the state/);
    // The file changed after the decode (a byte inside the range): refused, not copied.
    file[BACKUP_HEADER_BYTES + 4000] ^= 1;
    await expect(read({ offset: BACKUP_HEADER_BYTES + 1500, length: 5000 })).rejects.toThrow(/the file changed while it was restored/);
    expect((await read({ offset: BACKUP_HEADER_BYTES + 5000, length: 4000 })).equals(file.subarray(BACKUP_HEADER_BYTES + 5000, BACKUP_HEADER_BYTES + 9000))).toBe(true);
  });

  it('parses its arguments and reports bad ones with exit code 2', async () => {
    expect(parseRestoreArgs(['--file', 'f', '--data-dir=d', '--member-id', '0x2', '--members', MEMBERS.map((m) => `${m.id}=${m.name}=${m.peerAddress}=${m.apiAddress}`).join(',')])).toMatchObject({ file: 'f', dataDir: 'd', memberId: 2n });
    const lines: string[] = [];
    expect(await runRestoreCommand(['--file', 'f'], () => undefined, (line) => lines.push(line))).toBe(2);
    expect(lines.join('\n')).toMatch(/--data-dir is required/);
    expect(await runRestoreCommand(['--file', join(dir, 'missing.db'), '--data-dir', join(dir, 'd'), '--member-id', '1', '--members', '1=a=127.0.0.1:1=127.0.0.1:2'], () => undefined, (line) => lines.push(line))).toBe(1);
  });
});
