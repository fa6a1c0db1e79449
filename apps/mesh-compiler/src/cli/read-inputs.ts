/**
 * Reads the CLI's inputs — files, directories (walked for .yaml, .yml and .json, as istioctl
 * does) and `-` for stdin — under explicit limits. Unreadable inputs become diagnostics.
 */
import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { utf8ByteLength } from '@ward/mesh/istio-api';
import type { Diagnostic } from '@ward/mesh/istio-api';

export interface SourceText {
  /** The path as given (or found in a directory), `-` for stdin. */
  readonly sourceName: string;
  readonly text: string;
}

export interface InputLimits {
  /** Files read in one run (directories included). */
  readonly maxFilesCount: number;
  /** One file or stdin. Larger inputs are not read. */
  readonly maxFileBytes: number;
  /** Directory levels walked below a given directory. */
  readonly maxDirectoryDepthCount: number;
  /** All inputs of one run together; inputs past it are not read. */
  readonly maxTotalBytes: number;
}

export interface ReadInputsResult {
  readonly sources: readonly SourceText[];
  readonly problems: readonly Diagnostic[];
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many levels of symbolic links',
};

function errnoText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? 'error';
  return ERRNO_TEXT[code] ?? code;
}

function problem(sourceName: string, code: 'MESH_INPUT_UNREADABLE' | 'MESH_INPUT_TOO_LARGE', message: string): Diagnostic {
  return { code, severity: 'error', origin: 'load', message, sourceName, position: { line: 1, column: 1 } };
}

function decodeUtf8(sourceName: string, bytes: Uint8Array): SourceText | Diagnostic {
  try {
    return { sourceName, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return problem(sourceName, 'MESH_INPUT_UNREADABLE', `${sourceName} is not valid UTF-8 text`);
  }
}

function tooLarge(sourceName: string, bytes: number | string, limit: number): Diagnostic {
  return problem(sourceName, 'MESH_INPUT_TOO_LARGE', `input is ${bytes} bytes, more than the limit of ${limit}`);
}

/**
 * Reads a regular file of at most `limit` bytes. It is opened without blocking, so a FIFO or a
 * device is refused instead of waiting for a writer.
 */
async function readFileBounded(path: string, limit: number): Promise<SourceText | Diagnostic> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return problem(path, 'MESH_INPUT_UNREADABLE', `${JSON.stringify(path)} is not a regular file`);
    const size = info.size;
    if (size > limit) return tooLarge(path, size, limit);
    const buffer = new Uint8Array(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return tooLarge(path, `more than ${limit}`, limit);
    }
    return decodeUtf8(path, buffer.subarray(0, length));
  } finally {
    await handle.close();
  }
}

/** Reads stdin up to `limit` bytes; a longer stream is rejected without buffering the rest. */
export async function readStdinBounded(stream: AsyncIterable<Uint8Array | string>, limit: number): Promise<SourceText | Diagnostic> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
    length += bytes.length;
    if (length > limit) return tooLarge('-', `more than ${limit}`, limit);
    chunks.push(bytes);
  }
  const all = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return decodeUtf8('-', all);
}

/** Files under `directory` with a YAML/JSON extension, sorted, walking at most `depth` levels. */
async function listDirectory(directory: string, depth: number, limits: InputLimits, found: string[]): Promise<Diagnostic | undefined> {
  const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (depth >= limits.maxDirectoryDepthCount) return problem(path, 'MESH_INPUT_UNREADABLE', `directory nesting deeper than ${limits.maxDirectoryDepthCount} levels`);
      const nested = await listDirectory(path, depth + 1, limits, found);
      if (nested !== undefined) return nested;
    } else if (entry.isFile() && EXTENSIONS.has(extname(entry.name))) {
      found.push(path);
      if (found.length > limits.maxFilesCount) return problem(path, 'MESH_INPUT_UNREADABLE', `more than ${limits.maxFilesCount} input files`);
    }
  }
  return undefined;
}

async function expandPath(path: string, limits: InputLimits, files: string[]): Promise<Diagnostic | undefined> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (error) {
    return problem(path, 'MESH_INPUT_UNREADABLE', `cannot stat file ${JSON.stringify(path)}: ${errnoText(error)}`);
  }
  if (!isDirectory) {
    files.push(path);
    return files.length > limits.maxFilesCount ? problem(path, 'MESH_INPUT_UNREADABLE', `more than ${limits.maxFilesCount} input files`) : undefined;
  }
  return listDirectory(path, 0, limits, files);
}

/** Reads one regular file (a directory or an unreadable file is a problem, never an exception). */
export async function readSingleFile(path: string, limit: number): Promise<SourceText | Diagnostic> {
  try {
    if ((await stat(path)).isDirectory()) return problem(path, 'MESH_INPUT_UNREADABLE', `${JSON.stringify(path)} is a directory, not a file`);
    return await readFileBounded(path, limit);
  } catch (error) {
    return problem(path, 'MESH_INPUT_UNREADABLE', `cannot read file ${JSON.stringify(path)}: ${errnoText(error)}`);
  }
}

/** Reads every input named in `paths` (`-` reads `stdin`), in order. */
export async function readInputs(paths: readonly string[], stdin: AsyncIterable<Uint8Array | string>, limits: InputLimits): Promise<ReadInputsResult> {
  const sources: SourceText[] = [];
  const problems: Diagnostic[] = [];
  const files: string[] = [];
  for (const path of paths) {
    if (path === '-') {
      files.push('-');
      continue;
    }
    const expanded = await expandPath(path, limits, files);
    if (expanded !== undefined) {
      problems.push(expanded);
      if (files.length > limits.maxFilesCount) break;
    }
  }
  let totalBytes = 0;
  for (const file of files.slice(0, limits.maxFilesCount)) {
    const budget = Math.min(limits.maxFileBytes, limits.maxTotalBytes - totalBytes);
    try {
      const read = budget <= 0 ? undefined : file === '-' ? await readStdinBounded(stdin, budget) : await readFileBounded(file, budget);
      if (read === undefined || ('code' in read && read.code === 'MESH_INPUT_TOO_LARGE' && budget < limits.maxFileBytes)) {
        problems.push(problem(file, 'MESH_INPUT_TOO_LARGE', `the inputs together exceed ${limits.maxTotalBytes} bytes; ${file} and later inputs are not read`));
        break;
      }
      if ('text' in read) {
        sources.push(read);
        totalBytes += utf8ByteLength(read.text);
      } else {
        problems.push(read);
      }
    } catch (error) {
      problems.push(problem(file, 'MESH_INPUT_UNREADABLE', `cannot read file ${JSON.stringify(file)}: ${errnoText(error)}`));
    }
  }
  return { sources, problems };
}
