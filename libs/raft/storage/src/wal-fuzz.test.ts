import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, rm, truncate, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SeededRng } from '@ward/shared/clock';
import { WalCorruptError } from './errors';
import type { WalEntry, WalRecord } from './record';
import { RecordType } from './record';
import { frameOffsets, makeTempDir, mutateFile, segmentFiles, type TempDir } from './testing';
import { Wal } from './wal';
import type { WalOptions } from './wal-options';

/**
 * Crash and corruption fuzzing: write a random log, damage it at a random place, reopen. Either a
 * clean prefix of what was written comes back (never an unwritten or reordered record) and the
 * log accepts appends again, or opening refuses with a WalCorruptError naming a file and an offset
 * inside it. A bit flipped inside any written record must always be refused.
 */
// A longer soak: WARD_WAL_FUZZ_ITERATIONS=5000 npx vitest run --config vitest.base.ts <this file>
const ITERATIONS = Number.parseInt(process.env['WARD_WAL_FUZZ_ITERATIONS'] ?? '100', 10);
const METADATA = new TextEncoder().encode('fuzz');

type Mutation = 'truncate-last' | 'zero-range-last' | 'zero-sector' | 'flip-byte' | 'truncate-any';
const MUTATIONS: readonly Mutation[] = ['truncate-last', 'zero-range-last', 'zero-sector', 'flip-byte', 'truncate-any'];

let root: TempDir;
beforeAll(async () => {
  root = await makeTempDir('wal-fuzz');
});
afterAll(async () => {
  await root.remove();
});

function options(dir: string): WalOptions {
  return { dir, metadata: METADATA, segmentSizeBytes: 8 * 1024, maxRecordBytes: 1024, maxBatchBytes: 4 * 1024 };
}

async function writeRandomLog(dir: string, rng: SeededRng): Promise<WalEntry[]> {
  const { wal } = await Wal.open(options(dir));
  const written: WalEntry[] = [];
  const appends = 10 + rng.nextInt(40);
  for (let a = 0; a < appends; a++) {
    const records: WalRecord[] = [];
    const count = 1 + rng.nextInt(5);
    for (let i = 0; i < count; i++) {
      const index = written.length + 1;
      const data = new Uint8Array(1 + rng.nextInt(600)).map(() => 1 + rng.nextInt(255));
      const entry: WalEntry = { index, term: 1 + (index >> 4), type: rng.nextInt(3), data };
      written.push(entry);
      records.push({ kind: 'entry', entry });
    }
    if (rng.nextInt(3) === 0) records.push({ kind: 'hardState', hardState: { term: 1, vote: BigInt(rng.nextInt(5)), commit: written.length } });
    await wal.append(records);
  }
  await wal.close();
  return written;
}

/** Entries that lie wholly before `cut` in the last segment, plus all in earlier segments. */
async function entriesBefore(dir: string, files: string[], cut: number): Promise<number> {
  let count = 0;
  for (let f = 0; f < files.length; f++) {
    const bytes = new Uint8Array(await readFile(join(dir, files[f]!)));
    const view = new DataView(bytes.buffer);
    for (const offset of frameOffsets(bytes)) {
      const end = offset + ((8 + view.getUint32(offset, true) + 7) & ~7);
      if (bytes[offset + 12] === RecordType.Entry && (f < files.length - 1 || end <= cut)) count++;
    }
  }
  return count;
}

interface Damage {
  readonly mutation: Mutation;
  readonly file: string;
  readonly sealed: boolean;
  /** A bit flipped inside a written record: always detected (a flip never looks like a lost sector). */
  readonly flippedRecord?: boolean;
  /** For truncate-last: entries that must survive exactly. */
  readonly exactSurvivors?: number;
}

async function damage(dir: string, rng: SeededRng): Promise<Damage> {
  const files = await segmentFiles(dir);
  const mutation = MUTATIONS[rng.nextInt(MUTATIONS.length)]!;
  const lastTarget = mutation.endsWith('-last');
  const fileIndex = lastTarget ? files.length - 1 : rng.nextInt(files.length);
  const file = files[fileIndex]!;
  const path = join(dir, file);
  const bytes = new Uint8Array(await readFile(path));
  const offsets = frameOffsets(bytes);
  const dataEnd = offsets.length === 0 ? 0 : offsets.at(-1)! + ((8 + new DataView(bytes.buffer).getUint32(offsets.at(-1)!, true) + 7) & ~7);
  const at = rng.nextInt(Math.max(1, dataEnd + 16));
  const sealed = fileIndex < files.length - 1;
  if (mutation === 'truncate-last' || mutation === 'truncate-any') {
    await truncate(path, at);
    const exactSurvivors = mutation === 'truncate-last' ? await entriesBefore(dir, files, at) : undefined;
    return { mutation, file, sealed, ...(exactSurvivors === undefined ? {} : { exactSurvivors }) };
  }
  await mutateFile(path, (b) => {
    if (mutation === 'flip-byte') b[at] = b[at]! ^ (1 << rng.nextInt(8));
    else if (mutation === 'zero-sector') b.fill(0, at - (at % 512), at - (at % 512) + 512);
    else b.fill(0, at, at + 1 + rng.nextInt(2000));
    return b;
  });
  return { mutation, file, sealed, flippedRecord: mutation === 'flip-byte' && at < dataEnd };
}

function expectPrefix(recovered: readonly WalEntry[], written: readonly WalEntry[]): void {
  expect(recovered.length).toBeLessThanOrEqual(written.length);
  for (let i = 0; i < recovered.length; i++) expect(recovered[i]).toEqual(written[i]);
}

describe('WAL crash/corruption fuzz', () => {
  it(`${ITERATIONS} random logs with random damage: a clean prefix or a refusal naming file and offset`, async () => {
    const outcomes = { recovered: 0, refused: 0, recordFlips: 0 };
    for (let seed = 1; seed <= ITERATIONS; seed++) {
      const rng = new SeededRng(seed);
      const dir = join(root.path, `s${seed}`);
      await mkdir(dir);
      const written = await writeRandomLog(dir, rng);
      const hit = await damage(dir, rng);
      const context = `seed ${seed} ${hit.mutation} ${hit.file}`;
      const opened = await Wal.open(options(dir)).catch((e: unknown) => e);
      if (opened instanceof Error) {
        expect(opened, context).toBeInstanceOf(WalCorruptError);
        const error = opened as WalCorruptError;
        expect(error.file, context).toMatch(/\.wal$/);
        expect(Number.isSafeInteger(error.offset) && error.offset >= 0, context).toBe(true);
        outcomes.refused++;
      } else {
        expect(hit.flippedRecord, `${context}: a flipped record was accepted`).not.toBe(true);
        const { wal, state } = opened as Awaited<ReturnType<typeof Wal.open>>;
        const recovered = state?.entries ?? [];
        expectPrefix(recovered, written);
        if (hit.exactSurvivors !== undefined) expect(recovered.length, context).toBe(hit.exactSurvivors);
        // The repaired log takes appends and reads back whole.
        const next = recovered.length + 1;
        await wal.append([{ kind: 'entry', entry: { index: next, term: 99, type: 0, data: new Uint8Array([9]) } }]);
        await wal.close();
        const again = await Wal.open(options(dir));
        expect(again.state!.entries.length, context).toBe(next);
        expect(again.state!.entries.at(-1)!.term, context).toBe(99);
        await again.wal.close();
        outcomes.recovered++;
      }
      if (hit.flippedRecord === true) outcomes.recordFlips++;
      await rm(dir, { recursive: true, force: true });
    }
    expect(outcomes.recordFlips).toBeGreaterThan(5);
    expect(outcomes.recovered).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });
});
