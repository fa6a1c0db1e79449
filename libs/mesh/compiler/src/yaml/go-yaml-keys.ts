// go-yaml v2 sorts string map keys in a "natural" order (its `keyList.Less`): letters compare by
// code point, a letter sorts after a non-letter, and runs of digits compare as numbers, so
// `rule[2]` precedes `rule[10]`. istiod's golden files are written in this order.

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

function isLetter(char: string): boolean {
  return LETTER.test(char);
}

function isDigit(char: string): boolean {
  return DIGIT.test(char);
}

function digitValue(char: string): bigint {
  return BigInt((char.codePointAt(0) ?? 0) - 0x30);
}

/** Port of go-yaml v2's key order for two string keys: negative, zero or positive. */
export function compareGoYamlKeys(a: string, b: string): number {
  if (a === b) return 0;
  return goYamlKeyLess(a, b) ? -1 : goYamlKeyLess(b, a) ? 1 : 0;
}

function goYamlKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const ac = ar[i] ?? '';
    const bc = br[i] ?? '';
    if (ac === bc) continue;
    const al = isLetter(ac);
    const bl = isLetter(bc);
    if (al && bl) return codePoint(ac) < codePoint(bc);
    if (al || bl) return bl;
    return digitRunLess(ar, br, i);
  }
  return ar.length < br.length;
}

function codePoint(char: string): number {
  return char.codePointAt(0) ?? 0;
}

function digitRunLess(ar: readonly string[], br: readonly string[], i: number): boolean {
  let an = 0n;
  let bn = 0n;
  if (ar[i] === '0' || br[i] === '0') {
    for (let j = i - 1; j >= 0 && isDigit(ar[j] ?? ''); j--) {
      if (ar[j] !== '0') {
        an = 1n;
        bn = 1n;
        break;
      }
    }
  }
  let ai = i;
  for (; ai < ar.length && isDigit(ar[ai] ?? ''); ai++) an = an * 10n + digitValue(ar[ai] ?? '0');
  let bi = i;
  for (; bi < br.length && isDigit(br[bi] ?? ''); bi++) bn = bn * 10n + digitValue(br[bi] ?? '0');
  if (an !== bn) return an < bn;
  if (ai !== bi) return ai < bi;
  return codePoint(ar[i] ?? '') < codePoint(br[i] ?? '');
}
