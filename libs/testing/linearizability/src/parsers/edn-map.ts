import { HistoryParseError } from '../errors';

/** An EDN keyword such as `:invoke`, without the colon. */
export interface EdnKeyword {
  readonly keyword: string;
}

/** The EDN values a flat history map holds. */
export type EdnValue = string | number | boolean | null | EdnKeyword | readonly EdnValue[];

/** Deepest vector nesting accepted. */
const MAX_DEPTH = 8;

const SYMBOL_CHAR = /[A-Za-z0-9*+!\-_?<>=./]/;
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r' };

/** A reader over one line of EDN: whitespace and commas separate, as in EDN. */
class EdnReader {
  private position = 0;

  constructor(
    private readonly text: string,
    private readonly line: number,
  ) {}

  fail(message: string): never {
    throw new HistoryParseError(this.line, 'syntax', `line ${this.line}, column ${this.position + 1}: ${message}`);
  }

  skipSpace(): void {
    while (this.position < this.text.length && /[\s,]/.test(this.text[this.position] as string)) this.position++;
  }

  peek(): string | undefined {
    this.skipSpace();
    return this.text[this.position];
  }

  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected '${char}'`);
    this.position++;
  }

  atEnd(): boolean {
    return this.peek() === undefined;
  }

  readValue(depth: number): EdnValue {
    const char = this.peek();
    if (char === undefined) return this.fail('unexpected end of line');
    if (char === '"') return this.readString();
    if (char === ':') {
      this.position++;
      const name = this.readSymbol();
      return { keyword: name };
    }
    if (char === '[') return this.readVector(depth);
    const symbol = this.readSymbol();
    if (symbol === 'nil') return null;
    if (symbol === 'true' || symbol === 'false') return symbol === 'true';
    if (/^-?\d{1,15}$/.test(symbol)) return Number(symbol);
    return this.fail(`unsupported value ${JSON.stringify(symbol)}`);
  }

  private readSymbol(): string {
    const start = this.position;
    while (this.position < this.text.length && SYMBOL_CHAR.test(this.text[this.position] as string)) this.position++;
    if (this.position === start) this.fail('expected a value');
    return this.text.slice(start, this.position);
  }

  private readString(): string {
    this.position++; // opening quote
    let value = '';
    for (;;) {
      const char = this.text[this.position++];
      if (char === undefined) return this.fail('unterminated string');
      if (char === '"') return value;
      if (char !== '\\') {
        value += char;
        continue;
      }
      const escaped = ESCAPES[this.text[this.position++] ?? ''];
      if (escaped === undefined) this.fail('unsupported escape in string');
      value += escaped;
    }
  }

  private readVector(depth: number): EdnValue[] {
    if (depth >= MAX_DEPTH) this.fail('vectors nested too deeply');
    this.position++; // [
    const items: EdnValue[] = [];
    while (this.peek() !== ']') items.push(this.readValue(depth + 1));
    this.position++;
    return items;
  }
}

/**
 * Parses one line holding a flat EDN map with keyword keys, as Jepsen writes history entries:
 * `{:process 0, :type :invoke, :f :get, :key "4", :value nil}`. Values may be strings, integers,
 * nil, booleans, keywords and vectors of those.
 *
 * @throws HistoryParseError with reason `syntax` when the line is not such a map.
 */
export function parseEdnMap(text: string, line: number): ReadonlyMap<string, EdnValue> {
  const reader = new EdnReader(text, line);
  const fields = new Map<string, EdnValue>();
  reader.expect('{');
  while (reader.peek() !== '}') {
    if (reader.atEnd()) reader.fail('unterminated map');
    const key = reader.readValue(0);
    if (!isKeyword(key)) return reader.fail('map keys must be keywords');
    if (fields.has(key.keyword)) return reader.fail(`duplicate key :${key.keyword}`);
    fields.set(key.keyword, reader.readValue(0));
  }
  reader.expect('}');
  if (!reader.atEnd()) reader.fail('text after the map');
  return fields;
}

/** True when `value` is the keyword `:name`. */
export function isKeyword(value: EdnValue | undefined, name?: string): value is EdnKeyword {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return name === undefined || (value as EdnKeyword).keyword === name;
}
