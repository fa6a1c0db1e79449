/** Go's `strconv.Quote` (the `%q` verb) for the texts istiod formats into its messages. */
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

export function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) {
    const escape = ESCAPES[char];
    const code = char.codePointAt(0) ?? 0;
    if (escape !== undefined) quoted += escape;
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, '0')}`;
    else quoted += char;
  }
  return `${quoted}"`;
}
