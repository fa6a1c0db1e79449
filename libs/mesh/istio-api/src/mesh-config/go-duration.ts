// Durations as istiod reads MeshConfig: its (legacy) jsonpb decoder parses a Duration with Go's
// `time.ParseDuration` (`parseGoDuration` in @ward/shared/clock), not protojson's seconds-only form.

/** Protojson text of a duration in nanoseconds: seconds with 0, 3, 6 or 9 fraction digits. */
export function protoDurationText(nanos: bigint): string {
  const negative = nanos < 0n;
  const magnitude = negative ? -nanos : nanos;
  const seconds = magnitude / 1_000_000_000n;
  let fraction = (magnitude % 1_000_000_000n).toString().padStart(9, '0');
  while (fraction.length > 0 && fraction.endsWith('000')) fraction = fraction.slice(0, -3);
  return `${negative ? '-' : ''}${seconds}${fraction === '' ? '' : `.${fraction}`}s`;
}
