// A YAML writer that reproduces go-yaml v2's output for JSON-shaped data, byte for byte: the
// format of istiod's golden files (protojson → sigs.k8s.io/yaml JSONToYAML). Block style, two-space
// indentation, sequences inside mappings not indented, map keys in go-yaml's "natural" order (digit
// runs compared as numbers), scalars quoted only where go-yaml quotes them, lines folded at spaces
// past column 80.
import { assert } from '@ward/shared/errors';
import { isBreak, isPrintable, selectScalarStyle } from './go-yaml-scalar';
import { compareGoYamlKeys } from './go-yaml-keys';

/** JSON-compatible data; `undefined` object members are skipped as JSON.stringify does. */
export type YamlInput = unknown;

const BEST_INDENT = 2;
const BEST_WIDTH = 80;
const MAX_SIMPLE_KEY_LENGTH = 128;
/** Nesting limit; protojson documents the compiler writes stay far below it. */
export const MAX_YAML_DEPTH = 256;

class Writer {
  readonly parts: string[] = [];
  column = 0;
  whitespace = true;
  indention = true;

  put(text: string): void {
    this.parts.push(text);
    this.column += Array.from(text).length;
  }

  putBreak(): void {
    this.parts.push('\n');
    this.column = 0;
  }

  writeIndent(indent: number): void {
    const target = Math.max(indent, 0);
    if (!this.indention || this.column > target || (this.column === target && !this.whitespace)) this.putBreak();
    while (this.column < target) this.put(' ');
    this.whitespace = true;
    this.indention = true;
  }

  writeIndicator(indicator: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(indicator);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }
}

interface NodeContext {
  readonly mapping: boolean;
  readonly simpleKey: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function entriesOf(value: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => compareGoYamlKeys(a, b));
}

/**
 * Serialises JSON-shaped data as go-yaml v2 does (the format of istiod's golden files).
 *
 * @example
 * ```ts
 * toGoYaml({ name: 'envoy.filters.http.rbac', typedConfig: { '@type': 'x' } });
 * // "name: envoy.filters.http.rbac\ntypedConfig:\n  '@type': x\n"
 * ```
 */
export function toGoYaml(value: YamlInput): string {
  const writer = new Writer();
  emitNode(writer, value, -1, { mapping: false, simpleKey: false }, 0);
  writer.writeIndent(-1); // document end: go-yaml finishes with a line break
  return writer.parts.join('');
}

function emitNode(writer: Writer, value: unknown, indent: number, context: NodeContext, depth: number): void {
  assert(depth <= MAX_YAML_DEPTH, 'YAML nesting within limit');
  if (Array.isArray(value)) {
    if (value.length === 0) emitEmptyFlow(writer, '[', ']');
    else emitBlockSequence(writer, value, indent, context, depth);
    return;
  }
  if (isObject(value)) {
    const entries = entriesOf(value);
    if (entries.length === 0) emitEmptyFlow(writer, '{', '}');
    else emitBlockMapping(writer, entries, indent, depth);
    return;
  }
  emitScalar(writer, value, indent, context.simpleKey);
}

function emitEmptyFlow(writer: Writer, open: string, close: string): void {
  writer.writeIndicator(open, true, true, false);
  writer.writeIndicator(close, false, false, false);
}

function emitBlockSequence(writer: Writer, items: readonly unknown[], indent: number, context: NodeContext, depth: number): void {
  const indentless = context.mapping && !writer.indention;
  const sequenceIndent = indent < 0 ? 0 : indentless ? indent : indent + BEST_INDENT;
  for (const item of items) {
    writer.writeIndent(sequenceIndent);
    writer.writeIndicator('-', true, false, true);
    emitNode(writer, item, sequenceIndent, { mapping: false, simpleKey: false }, depth + 1);
  }
}

function emitBlockMapping(writer: Writer, entries: ReadonlyArray<[string, unknown]>, indent: number, depth: number): void {
  const mappingIndent = indent < 0 ? 0 : indent + BEST_INDENT;
  for (const [key, value] of entries) {
    writer.writeIndent(mappingIndent);
    if (isSimpleKey(key)) {
      emitScalar(writer, key, mappingIndent, true);
      writer.writeIndicator(':', false, false, false);
    } else {
      writer.writeIndicator('?', true, false, true);
      emitScalar(writer, key, mappingIndent, false);
      writer.writeIndent(mappingIndent);
      writer.writeIndicator(':', true, false, true);
    }
    emitNode(writer, value, mappingIndent, { mapping: true, simpleKey: false }, depth + 1);
  }
}

function isSimpleKey(key: string): boolean {
  return Array.from(key).length <= MAX_SIMPLE_KEY_LENGTH && !Array.from(key).some((c) => isBreak(c));
}

function emitScalar(writer: Writer, value: unknown, parentIndent: number, simpleKey: boolean): void {
  const indent = parentIndent < 0 ? BEST_INDENT : parentIndent + BEST_INDENT;
  if (typeof value === 'string') {
    const style = selectScalarStyle(value, simpleKey);
    if (style === 'plain') writePlain(writer, value, indent, !simpleKey);
    else if (style === 'single') writeSingleQuoted(writer, value, indent, !simpleKey);
    else writeDoubleQuoted(writer, value, indent, !simpleKey);
    return;
  }
  writePlain(writer, formatNonString(value), indent, false);
}

function formatNonString(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'bigint') return value.toString();
  throw new TypeError(`toGoYaml: cannot write a ${typeof value}`);
}

/** JSON numbers as go-yaml writes them: integers in decimal, floats in Go's shortest 'g' form. */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return '.nan';
  if (!Number.isFinite(value)) return value > 0 ? '.inf' : '-.inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return value.toFixed(0);
  const exponential = value.toExponential(); // shortest digits, e.g. "1.5e+21"
  const [mantissa = '', exponentText = '0'] = exponential.split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 21) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

function writePlain(writer: Writer, text: string, indent: number, allowBreaks: boolean): void {
  if (!writer.whitespace) writer.put(' ');
  const chars = Array.from(text);
  let spaces = false;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] ?? '';
    if (char === ' ') {
      if (allowBreaks && !spaces && writer.column > BEST_WIDTH && chars[i + 1] !== ' ') writer.writeIndent(indent);
      else writer.put(char);
      spaces = true;
    } else {
      writer.put(char);
      spaces = false;
    }
  }
  writer.whitespace = false;
  writer.indention = false;
}

function writeSingleQuoted(writer: Writer, text: string, indent: number, allowBreaks: boolean): void {
  writer.writeIndicator("'", true, false, false);
  const chars = Array.from(text);
  let spaces = false;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] ?? '';
    if (char === ' ') {
      const breakHere = allowBreaks && !spaces && writer.column > BEST_WIDTH && i > 0 && i < chars.length - 1 && chars[i + 1] !== ' ';
      if (breakHere) writer.writeIndent(indent);
      else writer.put(char);
      spaces = true;
    } else {
      writer.put(char === "'" ? "''" : char);
      spaces = false;
    }
  }
  writer.writeIndicator("'", false, false, false);
}

const ESCAPES: Record<number, string> = {
  0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e',
  0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
};

function escapeFor(codePoint: number): string {
  const named = ESCAPES[codePoint];
  if (named !== undefined) return `\\${named}`;
  const hex = codePoint.toString(16).toUpperCase();
  if (codePoint <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (codePoint <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

function writeDoubleQuoted(writer: Writer, text: string, indent: number, allowBreaks: boolean): void {
  writer.writeIndicator('"', true, false, false);
  const chars = Array.from(text);
  let spaces = false;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] ?? '';
    const codePoint = char.codePointAt(0) ?? 0;
    if (!isPrintable(codePoint) || codePoint === 0xfeff || isBreak(char) || char === '"' || char === '\\') {
      writer.put(escapeFor(codePoint));
      spaces = false;
    } else if (char === ' ') {
      if (allowBreaks && !spaces && writer.column > BEST_WIDTH && i > 0 && i < chars.length - 1) {
        writer.writeIndent(indent);
        if (chars[i + 1] === ' ') writer.put('\\');
      } else {
        writer.put(char);
      }
      spaces = true;
    } else {
      writer.put(char);
      spaces = false;
    }
  }
  writer.writeIndicator('"', false, false, false);
}
