import { HistoryParseError } from '../errors';

/** Size limits applied to history text before parsing. */
export interface ParseLimits {
  /** Largest accepted input, in UTF-16 code units. Default 64 Mi. */
  readonly maxInputChars?: number;
  /** Longest accepted line, in UTF-16 code units. Default 64 Ki. */
  readonly maxLineChars?: number;
}

const DEFAULT_MAX_INPUT_CHARS = 64 * 1024 * 1024;
const DEFAULT_MAX_LINE_CHARS = 64 * 1024;

/** Splits text into lines after enforcing the limits. */
export function splitLines(text: string, limits: ParseLimits = {}): string[] {
  if (typeof text !== 'string') throw new TypeError('history text must be a string');
  const maxInputChars = limits.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS;
  const maxLineChars = limits.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  if (text.length > maxInputChars) {
    throw new HistoryParseError(0, 'too-large', `history text has ${text.length} characters, limit ${maxInputChars}`);
  }
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.length > maxLineChars) {
      throw new HistoryParseError(index + 1, 'line-too-long', `line ${index + 1} is longer than ${maxLineChars} characters`);
    }
  });
  return lines;
}
