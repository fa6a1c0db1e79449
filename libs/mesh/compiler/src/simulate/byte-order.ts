// Envoy keeps RBAC policies in a std::map<std::string>: names are ordered as UTF-8 bytes.

/** Compares two strings as their UTF-8 bytes. */
export function compareBytewise(a: string, b: string): number {
  // UTF-16 code-unit order equals UTF-8 byte order unless a surrogate pair meets U+E000..U+FFFF.
  if (!/[\uD800-\uFFFF]/.test(a) && !/[\uD800-\uFFFF]/.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const ab = utf8(a);
  const bb = utf8(b);
  for (let i = 0; i < Math.min(ab.length, bb.length); i++) {
    const diff = (ab[i] ?? 0) - (bb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return ab.length - bb.length;
}

function utf8(text: string): number[] {
  const bytes: number[] = [];
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  }
  return bytes;
}
