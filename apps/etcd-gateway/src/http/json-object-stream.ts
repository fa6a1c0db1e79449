// The request side of grpc-gateway's streaming routes: a body that is a sequence of JSON objects
// (one per line, or back to back), read as it arrives. Each complete top-level object is handed
// on as text; anything that is not a sequence of objects ends the sequence with an error, and so
// does an object longer than the bound (no object is buffered beyond it).
import { StringDecoder } from 'node:string_decoder';
import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';

export class JsonObjectStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonObjectStreamError';
  }
}

/** Splits text arriving in pieces into its top-level JSON objects. */
export class JsonObjectSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private current = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private failed = false;

  constructor(private readonly maxObjectChars: number) {
    if (!Number.isSafeInteger(maxObjectChars) || maxObjectChars <= 0) throw new TypeError(`JsonObjectSplitter: maxObjectChars must be a positive integer, got ${maxObjectChars}`);
  }

  /** Whether an object has begun and not ended yet. */
  get inObject(): boolean {
    return this.depth > 0;
  }

  /** The objects completed by `chunk`, in order; throws JsonObjectStreamError on input that cannot be one. */
  push(chunk: Buffer): string[] {
    if (this.failed) throw new JsonObjectStreamError('request stream already failed');
    const text = this.decoder.write(chunk);
    const objects: string[] = [];
    let start = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.depth === 0) {
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        if (c !== 0x7b) return this.fail(`invalid character ${JSON.stringify(text[i])} looking for beginning of value`);
        this.depth = 1;
        start = i;
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth += 1;
      else if (c === 0x7d || c === 0x5d) {
        this.depth -= 1;
        if (this.depth === 0) {
          const piece = this.current + text.slice(start, i + 1);
          this.current = '';
          start = -1;
          if (piece.length > this.maxObjectChars) return this.fail('request message too large');
          objects.push(piece);
        }
      }
    }
    if (this.depth > 0) {
      this.current += text.slice(start);
      if (this.current.length > this.maxObjectChars) return this.fail('request message too large');
    }
    return objects;
  }

  /** The body ended: throws when it ended inside an object. */
  end(): void {
    if (this.failed) return;
    this.current += this.decoder.end();
    if (this.depth > 0) this.fail('unexpected EOF');
  }

  private fail(message: string): never {
    this.failed = true;
    this.current = '';
    throw new JsonObjectStreamError(message);
  }
}

const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * The body with every integer literal beyond 2^53 turned into a string, so that JSON.parse keeps
 * its digits: etcd's gateway reads int64 fields given as numbers exactly (`{"ID": 7587…}`, as
 * lease IDs are written by hand), and int64 fields take decimal strings anyway. Literals inside
 * strings are left alone.
 */
function quoteLargeIntegers(text: string): string {
  if (!/[0-9]{16}/.test(text)) return text;
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote (escapes included).
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      JSON_NUMBER.lastIndex = i;
      const token = JSON_NUMBER.exec(text)?.[0];
      if (token === undefined || token.length === 0) {
        i++;
        continue;
      }
      if (/^-?[0-9]+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(copied, i)}"${token}"`;
        copied = i + token.length;
      }
      i += token.length;
    } else {
      i++;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A request body as JSON: empty is the empty request; anything unparsable is INVALID_ARGUMENT. */
export function parseBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(quoteLargeIntegers(text)) as unknown;
  } catch {
    throw new GrpcStatusError(Status.INVALID_ARGUMENT, 'invalid JSON in request body');
  }
}

