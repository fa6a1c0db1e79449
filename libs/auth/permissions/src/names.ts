// User and role names are strings (etcd's requests carry them as proto `string`, i.e. UTF-8), and
// etcd orders them as Go strings: by UTF-8 bytes. JavaScript's `<` compares UTF-16 code units, which
// disagrees with byte order when a supplementary character (a surrogate pair) meets a character in
// U+E000..U+FFFF. Comparing code points restores byte order.

/**
 * Orders names as etcd does (UTF-8 byte order, which equals code point order for well-formed
 * strings): -1, 0 or 1.
 */
export function compareNames(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  const length = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    return codePointRank(x) < codePointRank(y) ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/** Surrogates (supplementary characters) sort after every BMP character at or above U+E000. */
function codePointRank(codeUnit: number): number {
  if (codeUnit < 0xd800) return codeUnit;
  if (codeUnit < 0xe000) return codeUnit + 0x2000;
  return codeUnit - 0x800;
}

/** Index of `name` in the sorted array, or the negative insertion point minus one. */
export function searchSortedNames(sorted: readonly string[], name: string): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareNames(sorted[middle]!, name);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -(low + 1);
}
