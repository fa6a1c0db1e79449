import { HistoryParseError } from '../errors';
import type { RegisterInput, RegisterOutput } from '../models/register';
import type { Operation } from '../types';
import { InvocationTracker } from './invocation-tracker';
import type { ParseLimits } from './limits';
import { splitLines } from './limits';

/** Options of {@link parseJepsenRegisterLog}. */
export interface JepsenRegisterLogOptions extends ParseLimits {
  /**
   * How to read `:fail :cas`. Jepsen's meaning of `:fail` is "definitely did not happen", so the
   * default `'not-applied'` drops the operation. `'compare-failed'` keeps it as a completed cas
   * that observed a value other than `from` (the stronger reading of etcd's answer).
   */
  readonly failedCas?: 'not-applied' | 'compare-failed';
}

/** `INFO  jepsen.util - <process> :<type> :<f> <value>`; spaces or tabs between fields. */
const EVENT_LINE = /^\S+\s+jepsen\.util\s+-\s+(\S+)\s+:(\S+)\s+:(\S+)(?:\s+(.*?))?\s*$/;
const INTEGER = /^-?\d{1,15}$/;
const CAS_PAIR = /^\[\s*(-?\d{1,15})\s+(-?\d{1,15})\s*\]$/;

function parseInteger(text: string | undefined, line: number, what: string): number {
  if (text === undefined || !INTEGER.test(text)) {
    throw new HistoryParseError(line, 'bad-field', `line ${line}: ${what} must be an integer`);
  }
  return Number(text);
}

function parseInput(f: string, value: string | undefined, line: number): RegisterInput {
  switch (f) {
    case 'read':
      return { kind: 'read' };
    case 'write':
      return { kind: 'write', value: parseInteger(value, line, 'the written value') };
    case 'cas': {
      const pair = CAS_PAIR.exec(value ?? '');
      if (pair === null) throw new HistoryParseError(line, 'bad-field', `line ${line}: cas needs [from to]`);
      return { kind: 'cas', from: Number(pair[1]), to: Number(pair[2]) };
    }
    default:
      throw new HistoryParseError(line, 'bad-field', `line ${line}: unknown register operation :${f}`);
  }
}

function parseOkOutput(input: RegisterInput, value: string | undefined, line: number): RegisterOutput {
  switch (input.kind) {
    case 'read':
      return { kind: 'read', value: value === 'nil' ? null : parseInteger(value, line, 'the value read') };
    case 'write':
      return { kind: 'write' };
    case 'cas':
      return { kind: 'cas', succeeded: true };
  }
}

/**
 * Parses a Jepsen etcd `register` log into register operations. Lines that are not
 * `jepsen.util` client events (and events of non-numeric processes such as the nemesis) are
 * noise. Times are line numbers. `:ok` completes an operation, `:fail` means it did not happen,
 * `:info` (and an invocation never completed) leaves its outcome unknown.
 *
 * @throws HistoryParseError on malformed client events, with the 1-based line.
 */
export function parseJepsenRegisterLog(
  text: string,
  options: JepsenRegisterLogOptions = {},
): Operation<RegisterInput, RegisterOutput>[] {
  const tracker = new InvocationTracker<RegisterInput, RegisterOutput>();
  splitLines(text, options).forEach((content, index) => {
    const line = index + 1;
    const event = EVENT_LINE.exec(content);
    if (event === null || !INTEGER.test(event[1] as string)) return;
    const process = Number(event[1]);
    const [type, f, value] = [event[2] as string, event[3] as string, event[4]];
    if (type === 'invoke') {
      tracker.invoke(process, parseInput(f, value, line), line, line);
      return;
    }
    const input = tracker.pending(process, line);
    if (input.kind !== f) {
      throw new HistoryParseError(line, 'mismatched-completion', `line ${line}: :${f} completes a ${input.kind}`);
    }
    if (type === 'ok') tracker.complete(process, { status: 'ok', output: parseOkOutput(input, value, line) }, line, line);
    else if (type === 'info') tracker.complete(process, { status: 'unknown' }, line, line);
    else if (type === 'fail' && input.kind === 'cas' && options.failedCas === 'compare-failed') {
      tracker.complete(process, { status: 'ok', output: { kind: 'cas', succeeded: false } }, line, line);
    } else if (type === 'fail') tracker.complete(process, { status: 'failed' }, line, line);
    else throw new HistoryParseError(line, 'bad-field', `line ${line}: unknown event type :${type}`);
  });
  return tracker.finish();
}
