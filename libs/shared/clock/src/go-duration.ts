/**
 * Go's `time.ParseDuration` grammar, as etcd reads `--auth-token ttl=` and istiod reads
 * MeshConfig durations: an optional sign, then one or more decimal numbers each with a unit (ns,
 * us, µs, μs, ms, s, m, h), e.g. `"1.5s"`, `"100ms"`, `"1m30s"`; `"0"` alone is allowed.
 */
const UNIT_NANOS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n,
  'μs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's `time.Duration` range: ±(2^63 − 1) ns. */
const MAX_NANOS = 9_223_372_036_854_775_807n;
const ELEMENT = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/u;

/** Nanoseconds of a Go duration string (exact), or undefined when Go would reject it. */
export function parseGoDuration(text: string): bigint | undefined {
  if (text.length > 64) return undefined;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const match = ELEMENT.exec(rest);
    if (match === null) return undefined;
    const [whole, integer = '', fraction = '', unit = 's'] = match;
    if (integer === '' && fraction === '') return undefined;
    const scale = UNIT_NANOS[unit] as bigint;
    total += BigInt(integer === '' ? '0' : integer) * scale;
    if (fraction !== '') total += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    if (total > MAX_NANOS) return undefined;
    rest = rest.slice(whole.length);
  }
  return negative ? -total : total;
}
