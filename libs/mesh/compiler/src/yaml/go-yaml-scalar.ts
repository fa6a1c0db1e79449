// How go-yaml v2 (the encoder behind sigs.k8s.io/yaml, which istiod's golden files come from)
// decides the style of a string scalar: plain when it would read back as the same string, double
// quoted when it would read back as another type, single quoted when plain is not allowed there.

/** Scalar styles the encoder chooses between. */
export type ScalarStyle = 'plain' | 'single' | 'double';

/** What the emitter's scalar analysis allows for one value. */
export interface ScalarAnalysis {
  readonly multiline: boolean;
  readonly flowPlainAllowed: boolean;
  readonly blockPlainAllowed: boolean;
  readonly singleQuotedAllowed: boolean;
}

const RESOLVE_MAP = new Set([
  'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON',
  'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF',
  '', '~', 'null', 'Null', 'NULL',
  '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF',
]);

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/u;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/u;
const GO_INT = /^[-+]?(0[bB][01]+|0[oO]?[0-7]+|0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)$/u;
const GO_FLOAT = /^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])$/u;
const TIMESTAMP = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d*)?(?:Z|[+-]\d{2}:\d{2})?)?$/u;

function looksLikeTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (match === null) return false;
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  if (match[4] !== undefined && (Number(match[4]) > 23 || Number(match[5]) > 59 || Number(match[6]) > 59)) return false;
  return true;
}

function fitsInt64(text: string): boolean {
  const negative = text.startsWith('-');
  const digits = text.replace(/^[-+]/u, '');
  let magnitude: bigint;
  if (/^0[xX]/u.test(digits)) magnitude = BigInt(`0x${digits.slice(2)}`);
  else if (/^0[bB]/u.test(digits)) magnitude = BigInt(`0b${digits.slice(2)}`);
  else if (/^0[oO]/u.test(digits)) magnitude = BigInt(`0o${digits.slice(2)}`);
  else if (/^0[0-7]+$/u.test(digits)) magnitude = BigInt(`0o${digits.slice(1)}`);
  else magnitude = BigInt(digits);
  return negative ? magnitude <= 2n ** 63n : magnitude <= 2n ** 64n - 1n;
}

/** True when go-yaml would read `text`, unquoted, as something other than a string. */
export function resolvesToNonString(text: string): boolean {
  const first = text.charAt(0);
  const hint =
    text === '' ? 'N' : '+-'.includes(first) ? 'S' : first >= '0' && first <= '9' ? 'D' : 'yYnNtTfFoO~'.includes(first) ? 'M' : first === '.' ? '.' : '';
  if (hint === '') return false;
  if (RESOLVE_MAP.has(text)) return true;
  if (hint === '.') return GO_FLOAT.test(text);
  if (hint === 'D' || hint === 'S') {
    if (looksLikeTimestamp(text)) return true;
    const plain = text.replace(/_/gu, '');
    if (GO_INT.test(plain) && fitsInt64(plain)) return true;
    if (YAML_STYLE_FLOAT.test(plain) && GO_FLOAT.test(plain)) return true;
    if (/^-?0b[01]+$/u.test(plain)) return true;
  }
  return false;
}

/** The style go-yaml's encoder asks for before the emitter's own analysis (`encoder.stringv`). */
export function requestedStyle(text: string): 'plain' | 'double' | 'literal' {
  if (text.includes('\n')) return 'literal';
  const canUsePlain = !resolvesToNonString(text) && !BASE60_FLOAT.test(text);
  return canUsePlain ? 'plain' : 'double';
}

/** YAML's printable set, as go-yaml's `is_printable` tests it. */
export function isPrintable(codePoint: number): boolean {
  return (
    codePoint === 0x0a ||
    (codePoint >= 0x20 && codePoint <= 0x7e) ||
    (codePoint >= 0xa0 && codePoint <= 0xd7ff) ||
    (codePoint >= 0xe000 && codePoint <= 0xfffd && codePoint !== 0xfeff)
  );
}

/** A line break character as go-yaml's `is_break` tests it. */
export function isBreak(char: string | undefined): boolean {
  return char === '\r' || char === '\n' || char === '\u0085' || char === '\u2028' || char === '\u2029';
}

function isBlank(char: string | undefined): boolean {
  return char === ' ' || char === '\t';
}

/** The indicator part of go-yaml's scalar analysis: characters that end a plain scalar. */
function indicators(chars: readonly string[]): { flow: boolean; block: boolean } {
  const text = chars.join('');
  let block = text.startsWith('---') || text.startsWith('...');
  let flow = block;
  let precededByWhitespace = true;
  chars.forEach((char, i) => {
    const next = chars[i + 1];
    const followedByWhitespace = next === undefined || isBlank(next);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(char)) {
        flow = true;
        block = true;
      } else if (char === '?' || char === ':') {
        flow = true;
        if (followedByWhitespace) block = true;
      } else if (char === '-' && followedByWhitespace) {
        flow = true;
        block = true;
      }
    } else if (',?[]{}'.includes(char)) {
      flow = true;
    } else if (char === ':') {
      flow = true;
      if (followedByWhitespace) block = true;
    } else if (char === '#' && precededByWhitespace) {
      flow = true;
      block = true;
    }
    precededByWhitespace = isBlank(char) || isBreak(char);
  });
  return { flow, block };
}

/** Port of `yaml_emitter_analyze_scalar`: which styles a value may be written in. */
export function analyzeScalar(text: string): ScalarAnalysis {
  if (text === '') return { multiline: false, flowPlainAllowed: false, blockPlainAllowed: true, singleQuotedAllowed: true };
  const chars = Array.from(text);
  const { flow: flowIndicators, block: blockIndicators } = indicators(chars);
  let lineBreaks = false;
  let special = false;
  let leadingOrTrailing = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  chars.forEach((char, i) => {
    if (!isPrintable(char.codePointAt(0) ?? 0)) special = true;
    const edge = i === 0 || i === chars.length - 1;
    if (char === ' ') {
      if (edge) leadingOrTrailing = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(char)) {
      lineBreaks = true;
      if (edge) leadingOrTrailing = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
  });
  const noPlain = leadingOrTrailing || breakSpace || lineBreaks || spaceBreak || special;
  return {
    multiline: lineBreaks,
    flowPlainAllowed: !noPlain && !flowIndicators,
    blockPlainAllowed: !noPlain && !blockIndicators,
    singleQuotedAllowed: !breakSpace && !spaceBreak && !special,
  };
}

/** Port of `yaml_emitter_select_scalar_style` for block context (the only one istiod's files use). */
export function selectScalarStyle(text: string, simpleKey: boolean): ScalarStyle {
  const analysis = analyzeScalar(text);
  const requested = requestedStyle(text);
  let style: ScalarStyle | 'literal' = requested;
  if (simpleKey && analysis.multiline) style = 'double';
  if (style === 'plain') {
    if (!analysis.blockPlainAllowed) style = 'single';
    if (text === '' && simpleKey) style = 'single';
  }
  if (style === 'single' && !analysis.singleQuotedAllowed) style = 'double';
  // Literal block scalars are not produced here: a value with a line break is written double quoted.
  if (style === 'literal') style = 'double';
  return style;
}
