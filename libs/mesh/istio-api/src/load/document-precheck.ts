/**
 * Limits enforced on the raw text before the YAML parser runs. The parser's cost grows with flow
 * nesting and with every document, so an input that would be rejected anyway is never parsed:
 * documents are found by their `---` / `...` marker lines (YAML forbids those at the start of a
 * line inside any content), measured, and scanned for flow nesting; a rejected document is
 * blanked out (newlines kept, so positions stay valid), and documents beyond the count limit are
 * cut off.
 */
import type { SourcePosition } from '../model/meta';
import type { LoadLimits } from './limits';
import { utf8ByteLength } from './limits';

/** A document's extent in the text, and the line of its first content. */
interface Chunk {
  readonly start: number;
  readonly end: number;
  readonly contentLine: number;
}

export interface PrecheckProblem {
  readonly code: 'MESH_DOCUMENT_TOO_LARGE' | 'MESH_NESTING_TOO_DEEP' | 'MESH_TOO_MANY_DOCUMENTS';
  readonly message: string;
  readonly position: SourcePosition;
}

export interface PrecheckResult {
  /** The text to parse: rejected documents blanked, extra documents cut off. */
  readonly text: string;
  readonly problems: readonly PrecheckProblem[];
}

const MARKER = /^(?:---|\.\.\.)(?:[ \t\r\n]|$)/u;

function isMarker(text: string, offset: number): boolean {
  return MARKER.test(text.slice(offset, offset + 4));
}

/** Splits `text` at document marker lines; the marker line belongs to the document it opens. */
function chunks(text: string): Chunk[] {
  const found: Chunk[] = [];
  let start = 0;
  let contentLine = 0;
  let line = 1;
  for (let offset = 0; offset <= text.length; line += 1) {
    const newline = text.indexOf('\n', offset);
    const lineEnd = newline === -1 ? text.length : newline;
    const marker = isMarker(text, offset);
    if (marker && offset > start) {
      found.push({ start, end: offset, contentLine: contentLine || line });
      start = offset;
      contentLine = 0;
    }
    const trimmed = text.slice(offset, Math.min(lineEnd, offset + 256)).trimStart();
    if (contentLine === 0 && !marker && trimmed !== '' && !trimmed.startsWith('#')) contentLine = line;
    if (newline === -1) break;
    offset = newline + 1;
  }
  found.push({ start, end: text.length, contentLine: contentLine || line });
  return found;
}

/**
 * True when flow collections (`[`, `{`) nest deeper than `limit` in `text[start, end)`. Quoted
 * scalars and comments are skipped; brackets elsewhere count, so the depth is never
 * underestimated (a block scalar full of unbalanced brackets can only be over-counted).
 */
export function flowDepthExceeds(text: string, start: number, end: number, limit: number): boolean {
  let depth = 0;
  let previous = '\n';
  for (let index = start; index < end; index++) {
    const char = text[index] as string;
    if ((char === '"' || char === "'") && /[\s[{,:?-]/u.test(previous)) {
      index = skipQuoted(text, index, end, char);
      previous = char;
      continue;
    }
    if (char === '#' && /\s/u.test(previous)) {
      const newline = text.indexOf('\n', index);
      index = newline === -1 || newline >= end ? end : newline - 1;
      previous = ' ';
      continue;
    }
    if (char === '[' || char === '{') {
      depth += 1;
      if (depth > limit) return true;
    } else if ((char === ']' || char === '}') && depth > 0) {
      depth -= 1;
    }
    previous = char;
  }
  return false;
}

function skipQuoted(text: string, open: number, end: number, quote: string): number {
  for (let index = open + 1; index < end; index++) {
    const char = text[index];
    if (quote === '"' && char === '\\') index += 1;
    else if (char === quote) {
      if (quote === "'" && text[index + 1] === "'") index += 1;
      else return index;
    }
  }
  return end;
}

/**
 * The chunk emptied but for its line breaks (lines keep their numbers) and a leading `---` (the
 * documents after it keep their indices).
 */
function blank(chunk: string): string {
  const keep = chunk.startsWith('---') ? 3 : 0;
  return chunk.slice(0, keep) + chunk.slice(keep).replace(/[^\n]/gu, '');
}

/** Checks document sizes, count and flow nesting on the raw text (see the module comment). */
export function precheckDocuments(text: string, limits: LoadLimits): PrecheckResult {
  const all = chunks(text);
  const problems: PrecheckProblem[] = [];
  let kept = all;
  if (all.length > limits.maxDocuments) {
    const extra = all[limits.maxDocuments] as Chunk;
    problems.push({ code: 'MESH_TOO_MANY_DOCUMENTS', message: `input has ${all.length} documents, more than the limit of ${limits.maxDocuments}; the rest are ignored`, position: { line: extra.contentLine, column: 1 } });
    kept = all.slice(0, limits.maxDocuments);
  }
  const parts: string[] = [];
  for (const chunk of kept) {
    const slice = text.slice(chunk.start, chunk.end);
    const position = { line: chunk.contentLine, column: 1 };
    const bytes = utf8ByteLength(slice);
    if (bytes > limits.maxDocumentBytes) {
      problems.push({ code: 'MESH_DOCUMENT_TOO_LARGE', message: `document is ${bytes} bytes, more than the limit of ${limits.maxDocumentBytes}`, position });
      parts.push(blank(slice));
    } else if (flowDepthExceeds(text, chunk.start, chunk.end, limits.maxNestingDepth)) {
      problems.push({ code: 'MESH_NESTING_TOO_DEEP', message: `nesting is deeper than ${limits.maxNestingDepth} levels`, position });
      parts.push(blank(slice));
    } else {
      parts.push(slice);
    }
  }
  return { text: parts.join(''), problems };
}
