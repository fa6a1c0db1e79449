import { HistoryParseError } from '../errors';
import type { AppendKvInput, AppendKvOutput } from '../models/append-kv';
import type { Operation } from '../types';
import type { EdnValue } from './edn-map';
import { isKeyword, parseEdnMap } from './edn-map';
import { InvocationTracker } from './invocation-tracker';
import type { ParseLimits } from './limits';
import { splitLines } from './limits';

const KINDS: ReadonlySet<string> = new Set(['get', 'put', 'append']);

function field(fields: ReadonlyMap<string, EdnValue>, name: string, line: number): EdnValue {
  if (!fields.has(name)) throw new HistoryParseError(line, 'missing-field', `line ${line}: missing :${name}`);
  return fields.get(name) as EdnValue;
}

function stringField(fields: ReadonlyMap<string, EdnValue>, name: string, line: number): string {
  const value = field(fields, name, line);
  if (typeof value !== 'string') throw new HistoryParseError(line, 'bad-field', `line ${line}: :${name} must be a string`);
  return value;
}

function parseInput(kind: string, fields: ReadonlyMap<string, EdnValue>, line: number): AppendKvInput {
  const key = stringField(fields, 'key', line);
  if (kind === 'get') return { kind: 'get', key };
  const value = stringField(fields, 'value', line);
  return kind === 'put' ? { kind: 'put', key, value } : { kind: 'append', key, value };
}

function parseOkOutput(input: AppendKvInput, fields: ReadonlyMap<string, EdnValue>, line: number): AppendKvOutput {
  if (input.kind !== 'get') return { kind: input.kind };
  const value = field(fields, 'value', line);
  if (value !== null && typeof value !== 'string') {
    throw new HistoryParseError(line, 'bad-field', `line ${line}: a get's :value must be a string or nil`);
  }
  return { kind: 'get', value: value ?? '' };
}

function eventKind(fields: ReadonlyMap<string, EdnValue>, line: number): { process: number; type: string; kind: string } {
  const process = field(fields, 'process', line);
  const type = field(fields, 'type', line);
  const f = field(fields, 'f', line);
  if (typeof process !== 'number') throw new HistoryParseError(line, 'bad-field', `line ${line}: :process must be an integer`);
  if (!isKeyword(type) || !['invoke', 'ok', 'fail', 'info'].includes(type.keyword)) {
    throw new HistoryParseError(line, 'bad-field', `line ${line}: :type must be :invoke, :ok, :fail or :info`);
  }
  if (!isKeyword(f) || !KINDS.has(f.keyword)) {
    throw new HistoryParseError(line, 'bad-field', `line ${line}: :f must be :get, :put or :append`);
  }
  return { process, type: type.keyword, kind: f.keyword };
}

/**
 * Parses a Jepsen-style EDN history of a get/put/append key-value store, one map per line
 * (`{:process 0, :type :invoke, :f :append, :key "4", :value "x 0 1 y"}`). Blank lines are
 * skipped. Times are line numbers. A completion must name the same :f and :key as its invocation.
 * `:fail` means the operation did not happen; `:info` or no completion means unknown outcome.
 * A get answered nil read "" (the model's empty value).
 *
 * @throws HistoryParseError with the 1-based line.
 */
export function parseEdnKvHistory(text: string, limits: ParseLimits = {}): Operation<AppendKvInput, AppendKvOutput>[] {
  const tracker = new InvocationTracker<AppendKvInput, AppendKvOutput>();
  splitLines(text, limits).forEach((content, index) => {
    const line = index + 1;
    if (content.trim() === '') return;
    const fields = parseEdnMap(content, line);
    const { process, type, kind } = eventKind(fields, line);
    if (type === 'invoke') {
      tracker.invoke(process, parseInput(kind, fields, line), line, line);
      return;
    }
    const input = tracker.pending(process, line);
    if (input.kind !== kind || input.key !== stringField(fields, 'key', line)) {
      throw new HistoryParseError(line, 'mismatched-completion', `line ${line}: completion does not match its invocation`);
    }
    if (type === 'ok') tracker.complete(process, { status: 'ok', output: parseOkOutput(input, fields, line) }, line, line);
    else tracker.complete(process, { status: type === 'fail' ? 'failed' : 'unknown' }, line, line);
  });
  return tracker.finish();
}
