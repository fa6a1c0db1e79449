// Go's time.ParseDuration grammar (etcd's `ttl=` option): an optional sign, then one or more
// decimal numbers each followed by a unit (ns, us, µs, μs, ms, s, m, h); "0" alone is allowed.

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5
  'μs': 1e-3, // U+03BC
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /([0-9]*(?:\.[0-9]*)?)([a-zµμ]+)/y;

/** Milliseconds (possibly fractional) of a Go duration string, or undefined when it does not parse. */
export function parseGoDurationMs(text: string): number | undefined {
  if (text.length === 0 || text.length > 64) return undefined;
  let rest = text;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest.length === 0) return undefined;
  let totalMs = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < rest.length) {
    const start = PART.lastIndex;
    const match = PART.exec(rest);
    if (match === null || match.index !== start) return undefined;
    const [, number, unit] = match;
    if (number === undefined || number === '' || number === '.' || unit === undefined) return undefined;
    const unitMs = UNIT_MS[unit];
    if (unitMs === undefined) return undefined;
    totalMs += Number(number) * unitMs;
  }
  return sign * totalMs;
}
