// `raft-node snapshot-restore`: turns a backup file (backup-file.ts) into the data directory of one
// member of a NEW cluster, as `etcdutl snapshot restore` does for etcd. Every member of the new
// cluster is restored from the same file with the same member list; each then boots from a local
// snapshot at the backup's raft index (term 1, the new member list as voters, committed), and the
// members elect a leader as in a fresh cluster. The file is checked completely (size, SHA-256,
// header, padding, state decoding) before anything is written, in one read: the checksum is fed
// the state as it is decoded. The directory is prepared next to the target and renamed into
// place, so a failure leaves no partial data directory.
import { rename, rm, readdir, stat, mkdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Applier, type KeySpaceSection } from '@ward/etcd/apply';
import { encodeSnapshotHead, votersConfState, type ConfState } from '@ward/raft/core';
import { crc32c } from '@ward/shared/checksum';
import { assert } from '@ward/shared/errors';
import { RaftPersistence, memberWalMetadata } from '@ward/raft/storage';
import { BACKUP_HEADER_BYTES, BACKUP_READ_PIECE_BYTES, BackupDigest, BackupFileError, backupState, openBackupFile, readBackupHeader, readBackupLayout, type BackupInfo, type BackupLayout, type BackupSource } from './backup-file';
import { clusterIdOf, parseMemberId, parseMembers, type MemberSpec } from '../members';
import { NodeSnapshotDecoder, encodeNodeSnapshotHead } from '../membership/codec';
import { MemberList } from '../membership/member-list';

export interface RestoreOptions {
  readonly file: string;
  readonly dataDir: string;
  readonly memberId: bigint;
  readonly members: readonly MemberSpec[];
}

export interface RestoreResult extends BackupInfo {
  readonly dataDir: string;
  readonly newClusterId: bigint;
  readonly sourceClusterId: bigint;
}

/** Something that stops a restore before anything was written. */
export class RestoreError extends Error {
  readonly code = 'ERR_RESTORE_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    if (!(await stat(dir)).isDirectory()) return false;
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/**
 * The restored cluster starts with no simple token (as etcd, which keeps none on disk): the state's
 * tokens are expired the way the leader expires idle ones, as root, at the snapshot index (one past
 * the state's applied index when they coincide). Deterministic, so every member restored from the
 * same file gets the same state. Returns the index the state is then at.
 */
function dropSimpleTokens(applier: Applier, index: number): number {
  const tokens = [...applier.simpleTokens()];
  if (tokens.length === 0) return index;
  const at = Math.max(index, applier.appliedIndex + 1);
  const header = { id: 0n, username: 'root', authRevision: applier.authView.revision };
  const result = applier.apply(at, { header, operation: { type: 'simpleTokenExpire', request: { tokens } } });
  if (!result.ok) throw new BackupFileError(`the simple tokens in the state cannot be dropped: ${result.error.message}`);
  return at;
}

/** A backup's state decoded, and where its key space's bytes lie in the file. */
interface RestoredState {
  readonly applier: Applier;
  /** The key space's canonical bytes: their offset in the backup file and their length. */
  readonly keySpace: KeySpaceSection;
  /** The CRC-32C of each piece of the state as it was read. */
  readonly checksums: PieceChecksums;
}

/** The CRC-32C of each piece of a backup's state as a reader went through it: pieces of `pieceBytes` from the state's start. */
export interface PieceChecksums {
  readonly pieceBytes: number;
  readonly sums: readonly number[];
}

/** The backup's state decoded as it is read (a member snapshot, or the applier's state alone), each piece fed to `digest` first. */
async function restoreState(source: BackupSource, layout: BackupLayout, digest: BackupDigest): Promise<RestoredState> {
  try {
    // The backup's SHA-256 covers every byte and is checked before the state is used (restoreMember).
    const applierDecoder = Applier.decoder({}, { checksumChecked: true });
    const decoder = new NodeSnapshotDecoder(layout.stateBytes, applierDecoder);
    const checksums = { pieceBytes: BACKUP_READ_PIECE_BYTES, sums: [] as number[] };
    // One buffer, read into again piece after piece: the decoders copy what they keep.
    const buffer = new Uint8Array(checksums.pieceBytes);
    for await (const piece of backupState(source, layout, checksums.pieceBytes, buffer)) {
      digest.add(piece);
      checksums.sums.push(crc32c(piece));
      decoder.push(piece);
    }
    const { headBytes } = decoder.finish();
    const applier = applierDecoder.finish();
    const section = applierDecoder.keySpaceSection!;
    return { applier, keySpace: { offset: BACKUP_HEADER_BYTES + headBytes + section.offset, length: section.length }, checksums };
  } catch (error) {
    if (error instanceof BackupFileError) throw error;
    throw new BackupFileError(`the state in the file does not restore: ${(error as Error).message}`);
  }
}

/**
 * The bytes of `range` (inside the state of `layout`) read again from the backup, in the pieces the
 * decode read (restoreState), each checked against the CRC-32C it had then: a file changed since
 * throws BackupFileError. The pieces are views of one buffer: each is valid until the next is asked for.
 */
export async function* readAgain(source: BackupSource, layout: BackupLayout, checksums: PieceChecksums, range: KeySpaceSection): AsyncGenerator<Uint8Array> {
  const { pieceBytes, sums } = checksums;
  const stateEnd = BACKUP_HEADER_BYTES + layout.stateBytes;
  const end = range.offset + range.length;
  assert(range.offset >= BACKUP_HEADER_BYTES && end <= stateEnd, 'restore: the range lies outside the state');
  const buffer = new Uint8Array(pieceBytes);
  for (let piece = Math.floor((range.offset - BACKUP_HEADER_BYTES) / pieceBytes); ; piece++) {
    const start = BACKUP_HEADER_BYTES + piece * pieceBytes;
    if (start >= end) return;
    const bytes = await source.read(start, Math.min(pieceBytes, stateEnd - start), buffer);
    if (crc32c(bytes) !== sums[piece]) throw new BackupFileError('the file changed while it was restored');
    yield bytes.subarray(Math.max(0, range.offset - start), Math.min(bytes.length, end - start));
  }
}

/**
 * Restores one member's data directory; throws RestoreError / BackupFileError with nothing written.
 * The file is read in pieces (checked and decoded in one pass) and the member's snapshot written in
 * pieces: neither is ever whole in memory, only the state itself. The key space, the bulk of the
 * snapshot, is not encoded again: its canonical bytes (the decode accepts no other form, so they are
 * the ones an encode of the restored key space would give) are copied from the file, between the
 * parts around it encoded from the restored state (its simple tokens dropped).
 */
export async function restoreMember(options: RestoreOptions): Promise<RestoreResult> {
  const member = options.members.find((m) => m.id === options.memberId);
  if (member === undefined) throw new RestoreError(`member id ${options.memberId} is not in the member list`);
  const dataDir = resolve(options.dataDir);
  if (!(await isEmptyOrMissing(dataDir))) throw new RestoreError(`data dir ${dataDir} exists and is not empty; restore writes only fresh directories`);
  const source = await openBackupFile(options.file);
  try {
    const header = await readBackupHeader(source);
    // The file is read once: its checksum is fed the header, then each piece of the state as it
    // is decoded. A damaged file is reported as such even when its damage also broke the header
    // or the state: the checksum's verdict comes before any other error.
    const digest = new BackupDigest();
    digest.add(header.bytes);
    let backup: BackupLayout;
    let state: RestoredState;
    try {
      backup = await readBackupLayout(source, header);
      state = await restoreState(source, backup, digest);
    } catch (error) {
      await digest.finish(source);
      throw error;
    }
    await digest.finish(source);
    const { applier, keySpace } = state;
    if (applier.appliedIndex > backup.index) throw new BackupFileError(`the state was applied up to ${applier.appliedIndex}, past the header's index ${backup.index}`);
    const index = dropSimpleTokens(applier, Math.max(backup.index, 1));
    const voters = options.members.map((m) => m.id);
    const clusterId = clusterIdOf(voters);
    const confState = votersConfState(voters);
    const around = applier.snapshotAroundKeySpace(keySpace.length);
    const applierBytes = around.head.length + keySpace.length + around.tail.length;
    // The new cluster's members are the ones given (as etcd's restore takes --initial-cluster);
    // the source cluster's member list in the file is not carried over.
    const nodeHead = encodeNodeSnapshotHead({ clusterId, members: MemberList.initial(options.members) }, applierBytes);
    const head = encodeSnapshotHead({ index, term: 1, confState }, nodeHead.length + applierBytes);
    async function* data(): AsyncGenerator<Uint8Array> {
      yield head;
      yield nodeHead;
      yield around.head;
      yield* readAgain(source, backup, state.checksums, keySpace);
      yield around.tail;
    }
    await writeDataDir(dataDir, { clusterId, memberId: options.memberId, confState, index }, data());
    return { dataDir, newClusterId: clusterId, sourceClusterId: backup.clusterId, index: backup.index, term: backup.term, revision: backup.revision, clusterId: backup.clusterId };
  } finally {
    await source.close();
  }
}

/** The member's data directory with `snapshot` as its snapshot at `index` (term 1, committed), made next to `dataDir` and renamed into place. */
async function writeDataDir(dataDir: string, at: { clusterId: bigint; memberId: bigint; confState: ConfState; index: number }, snapshot: AsyncIterable<Uint8Array>): Promise<void> {
  const { clusterId, memberId, confState, index } = at;
  await mkdir(dirname(dataDir), { recursive: true });
  const staging = join(dirname(dataDir), `.${basename(dataDir)}.restoring`);
  await rm(staging, { recursive: true, force: true });
  try {
    const booted = await RaftPersistence.open({ dir: staging, metadata: memberWalMetadata(clusterId, memberId), bootstrapConfState: confState, snapshotDataInMemory: false });
    try {
      const { disk } = booted.persistence;
      await disk.snapshots.save({ index, term: 1 }, snapshot);
      await disk.recordSnapshot({ index, term: 1 }, { restartsLog: true, hardState: { term: 1, vote: 0n, commit: index } });
    } finally {
      await booted.persistence.close();
    }
    await rm(dataDir, { recursive: true, force: true });
    await rename(staging, dataDir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

const USAGE = 'usage: raft-node snapshot-restore --file <backup.db> --data-dir <dir> --member-id <id> --members <id=name=peerHost:port=apiHost:port,...>';

/** Parses `--name value` / `--name=value` arguments of the snapshot-restore command. */
export function parseRestoreArgs(args: readonly string[]): RestoreOptions {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--(file|data-dir|member-id|members)(?:=(.*))?$/.exec(arg);
    if (match === null) throw new RestoreError(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    const value = match[2] ?? args[++i];
    if (value === undefined || value === '') throw new RestoreError(`--${match[1]} needs a value\n${USAGE}`);
    if (values.has(match[1]!)) throw new RestoreError(`--${match[1]} given twice\n${USAGE}`);
    values.set(match[1]!, value);
  }
  for (const name of ['file', 'data-dir', 'member-id', 'members']) {
    if (!values.has(name)) throw new RestoreError(`--${name} is required\n${USAGE}`);
  }
  try {
    return {
      file: values.get('file')!,
      dataDir: values.get('data-dir')!,
      memberId: parseMemberId(values.get('member-id')!),
      members: parseMembers(values.get('members')!.split(',')),
    };
  } catch (error) {
    throw new RestoreError(`${(error as Error).message}\n${USAGE}`);
  }
}

/**
 * The command: returns the process exit code (0 restored, 1 the file or the directory was refused
 * or writing failed, 2 bad arguments) after printing what happened.
 */
export async function runRestoreCommand(args: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let options: RestoreOptions;
  try {
    options = parseRestoreArgs(args);
  } catch (error) {
    err(`raft-node snapshot-restore: ${(error as Error).message}`);
    return 2;
  }
  try {
    const result = await restoreMember(options);
    out(
      `restored ${options.file} into ${result.dataDir}: member ${options.memberId.toString(16)} of cluster ${result.newClusterId.toString(16)} ` +
        `(raft index ${result.index}, revision ${result.revision}, taken from cluster ${result.sourceClusterId.toString(16)})`,
    );
    return 0;
  } catch (error) {
    const prefix = error instanceof BackupFileError ? `${options.file}: ` : '';
    err(`raft-node snapshot-restore: ${prefix}${(error as Error).message}`);
    return 1;
  }
}
