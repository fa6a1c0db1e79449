/**
 * Splits an input into YAML documents and turns each into a positioned tree, enforcing every
 * limit of {@link LoadLimits} before the expensive step it protects.
 */
import { Composer, LineCounter, Parser, isScalar } from 'yaml';
import type { CST, Document } from 'yaml';
import type { SourcePosition } from '../model/meta';
import type { LoadCode } from '../diagnostics/codes';
import { cstNestingDepth } from './cst-depth';
import { precheckDocuments } from './document-precheck';
import type { LoadLimits } from './limits';
import { utf8ByteLength } from './limits';
import { documentTree } from './yaml-tree';
import type { YNode } from './yaml-tree';

/** A document that parsed into a tree. */
export interface ParsedDocument {
  readonly documentIndex: number;
  readonly position: SourcePosition;
  readonly root: YNode;
}

/** A problem found while reading the input, before any resource decoding. */
export interface ParseProblem {
  readonly code: LoadCode;
  readonly message: string;
  readonly position: SourcePosition;
  readonly documentIndex?: number;
}

export interface ParseResult {
  readonly documents: readonly ParsedDocument[];
  readonly problems: readonly ParseProblem[];
}

const FIRST_LINE: SourcePosition = { line: 1, column: 1 };

function positionAt(lineCounter: LineCounter, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

function composeOne(token: CST.Document): Document | undefined {
  const composer = new Composer({ version: '1.1', prettyErrors: false, uniqueKeys: true, strict: true });
  const documents = [...composer.next(token), ...composer.end()];
  return documents[0] as Document | undefined;
}

/** No node at all, or the implicit empty scalar of a document holding only comments. */
function isEmptyContent(document: Document): boolean {
  const contents = document.contents;
  return contents === null || (isScalar(contents) && contents.value === null && contents.source === '' && contents.tag === undefined);
}

interface DocumentSpan {
  readonly token: CST.Document;
  readonly bytes: number;
}

function documentSpans(text: string, tokens: readonly CST.Token[]): DocumentSpan[] {
  const spans: DocumentSpan[] = [];
  tokens.forEach((token, index) => {
    if (token.type !== 'document') return;
    const end = tokens[index + 1]?.offset ?? text.length;
    spans.push({ token, bytes: utf8ByteLength(text.slice(token.offset, end)) });
  });
  return spans;
}

function parseOne(span: DocumentSpan, documentIndex: number, lineCounter: LineCounter, limits: LoadLimits): ParsedDocument | ParseProblem[] {
  const position = positionAt(lineCounter, span.token.value?.offset ?? span.token.offset);
  if (span.bytes > limits.maxDocumentBytes) {
    return [{ code: 'MESH_DOCUMENT_TOO_LARGE', message: `document is ${span.bytes} bytes, more than the limit of ${limits.maxDocumentBytes}`, position, documentIndex }];
  }
  if (cstNestingDepth(span.token, limits.maxNestingDepth) > limits.maxNestingDepth) {
    return [{ code: 'MESH_NESTING_TOO_DEEP', message: `nesting is deeper than ${limits.maxNestingDepth} levels`, position, documentIndex }];
  }
  const document = composeOne(span.token);
  // A document of only comments or a bare `---` holds nothing; istioctl skips it too.
  if (document === undefined || (isEmptyContent(document) && document.errors.length === 0)) return [];
  if (document.errors.length > 0) {
    return document.errors.map((error) => ({
      code: 'MESH_YAML_SYNTAX' as const,
      message: `invalid YAML: ${error.message}`,
      position: positionAt(lineCounter, error.pos[0]),
      documentIndex,
    }));
  }
  const tree = documentTree(document, lineCounter, {
    maxNestingDepth: limits.maxNestingDepth,
    maxNodes: limits.maxNodesPerDocument,
    maxCollectionItems: limits.maxCollectionItems,
  });
  if (!tree.ok) return [{ ...tree.problem, documentIndex }];
  return { documentIndex, position: tree.root.position, root: tree.root };
}

/**
 * Parses `text` (YAML 1.1, as Kubernetes tooling reads it; JSON is YAML too) into documents.
 * Empty documents (only comments or `---`) are skipped. Problems never throw.
 */
export function parseDocuments(text: string, limits: LoadLimits): ParseResult {
  if (text.length > limits.maxSourceBytes || utf8ByteLength(text) > limits.maxSourceBytes) {
    const bytes = utf8ByteLength(text);
    return { documents: [], problems: [{ code: 'MESH_INPUT_TOO_LARGE', message: `input is ${bytes} bytes, more than the limit of ${limits.maxSourceBytes}`, position: FIRST_LINE }] };
  }
  const checked = precheckDocuments(text, limits);
  const lineCounter = new LineCounter();
  const tokens = [...new Parser(lineCounter.addNewLine).parse(checked.text)];
  const spans = documentSpans(checked.text, tokens);
  const problems: ParseProblem[] = [...checked.problems];
  const documents: ParsedDocument[] = [];
  if (spans.length > limits.maxDocuments) {
    const extra = spans[limits.maxDocuments] as DocumentSpan;
    problems.push({ code: 'MESH_TOO_MANY_DOCUMENTS', message: `input has ${spans.length} documents, more than the limit of ${limits.maxDocuments}; the rest are ignored`, position: positionAt(lineCounter, extra.token.offset) });
  }
  spans.slice(0, limits.maxDocuments).forEach((span, documentIndex) => {
    const result = parseOne(span, documentIndex, lineCounter, limits);
    if (Array.isArray(result)) problems.push(...result);
    else documents.push(result);
  });
  return { documents, problems };
}
