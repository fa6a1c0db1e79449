import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readInputs, readSingleFile, readStdinBounded } from './read-inputs';

const LIMITS = { maxFilesCount: 10, maxFileBytes: 1024, maxDirectoryDepthCount: 2, maxTotalBytes: 4096 };
const EMPTY_STDIN = Readable.from([]);

function tree(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), 'ward-mesh-'));
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, content);
  }
  return root;
}

describe('readInputs', () => {
  it('walks directories for .yaml, .yml and .json files in sorted order', async () => {
    const root = tree({ 'b.yaml': 'b', 'a.yml': 'a', 'sub/c.json': 'c', 'notes.txt': 'x' });
    const result = await readInputs([root], EMPTY_STDIN, LIMITS);
    expect(result.problems).toEqual([]);
    expect(result.sources.map((s) => [s.sourceName.slice(root.length + 1), s.text])).toEqual([['a.yml', 'a'], ['b.yaml', 'b'], ['sub/c.json', 'c']]);
  });

  it('reports a missing file and still reads the others', async () => {
    const root = tree({ 'ok.yaml': 'ok' });
    const result = await readInputs([join(root, 'missing.yaml'), join(root, 'ok.yaml')], EMPTY_STDIN, LIMITS);
    expect(result.sources.map((s) => s.text)).toEqual(['ok']);
    expect(result.problems.map((p) => [p.code, p.message.replace(root, '<root>')])).toEqual([
      ['MESH_INPUT_UNREADABLE', 'cannot stat file "<root>/missing.yaml": no such file or directory'],
    ]);
  });

  it('does not read a file over the size limit', async () => {
    const root = tree({ 'big.yaml': 'x'.repeat(2048) });
    const result = await readInputs([join(root, 'big.yaml')], EMPTY_STDIN, LIMITS);
    expect(result.sources).toEqual([]);
    expect(result.problems.map((p) => p.code)).toEqual(['MESH_INPUT_TOO_LARGE']);
  });

  it('rejects input that is not UTF-8', async () => {
    const root = tree({ 'bin.yaml': new Uint8Array([0x61, 0xff, 0xfe]) });
    const result = await readInputs([join(root, 'bin.yaml')], EMPTY_STDIN, LIMITS);
    expect(result.problems.map((p) => p.message)).toEqual([`${join(root, 'bin.yaml')} is not valid UTF-8 text`]);
  });

  it('limits directory depth and file count', async () => {
    const deep = tree({ 'a/b/c/d.yaml': 'd' });
    expect((await readInputs([deep], EMPTY_STDIN, LIMITS)).problems.map((p) => p.message)).toEqual(['directory nesting deeper than 2 levels']);
    const many = tree(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${String(i).padStart(2, '0')}.yaml`, 'x'])));
    const result = await readInputs([many], EMPTY_STDIN, LIMITS);
    expect(result.sources).toHaveLength(10);
    expect(result.problems.map((p) => p.message)).toEqual(['more than 10 input files']);
  });
});

describe('hostile file system inputs', () => {
  it('refuses a FIFO without waiting for a writer, and skips FIFOs and symlinks in directories', async () => {
    const root = tree({ 'ok.yaml': 'ok' });
    execFileSync('mkfifo', [join(root, 'pipe.yaml')]);
    symlinkSync(root, join(root, 'loop.yaml'));
    const direct = await readInputs([join(root, 'pipe.yaml')], EMPTY_STDIN, LIMITS);
    expect(direct.problems.map((p) => p.message)).toEqual([`${JSON.stringify(join(root, 'pipe.yaml'))} is not a regular file`]);
    const walked = await readInputs([root], EMPTY_STDIN, LIMITS);
    expect(walked.sources.map((s) => s.text)).toEqual(['ok']);
    expect(walked.problems).toEqual([]);
  });

  it('stops reading once the inputs together pass the total limit', async () => {
    const root = tree(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.yaml`, 'x'.repeat(1000)])));
    const result = await readInputs([root], EMPTY_STDIN, LIMITS);
    expect(result.sources).toHaveLength(4);
    expect(result.problems.map((p) => p.code)).toEqual(['MESH_INPUT_TOO_LARGE']);
  });

  it('readSingleFile refuses a directory and reports a missing file', async () => {
    const root = tree({});
    expect(await readSingleFile(root, 1024)).toMatchObject({ code: 'MESH_INPUT_UNREADABLE', message: `${JSON.stringify(root)} is a directory, not a file` });
    expect(await readSingleFile(join(root, 'none'), 1024)).toMatchObject({ code: 'MESH_INPUT_UNREADABLE' });
  });
});

describe('readStdinBounded', () => {
  it('reads stdin chunks', async () => {
    expect(await readStdinBounded(Readable.from([Buffer.from('a: '), Buffer.from('1')]), 1024)).toEqual({ sourceName: '-', text: 'a: 1' });
  });

  it('stops reading a stream over the limit', async () => {
    const chunks = Array.from({ length: 100 }, () => Buffer.alloc(100, 0x61));
    const result = await readStdinBounded(Readable.from(chunks), 1024);
    expect(result).toMatchObject({ code: 'MESH_INPUT_TOO_LARGE', sourceName: '-' });
  });
});
