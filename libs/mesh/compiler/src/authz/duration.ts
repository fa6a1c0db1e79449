// Durations in protojson's canonical text form ("600s", "0.002s", "1.5s").

const DURATION = /^(-)?(\d{1,12})(?:\.(\d{1,9}))?s$/u;

/**
 * The canonical protojson spelling of a duration (Go's encoder: 0, 3, 6 or 9 fraction digits),
 * or undefined when `text` is not a protojson duration.
 */
export function canonicalDuration(text: string): string | undefined {
  const match = DURATION.exec(text);
  if (match === null) return undefined;
  const seconds = String(Number(match[2]));
  const nanos = (match[3] ?? '').padEnd(9, '0');
  const sign = match[1] === '-' && (seconds !== '0' || /[1-9]/u.test(nanos)) ? '-' : '';
  let fraction = nanos;
  if (fraction.endsWith('000')) fraction = fraction.slice(0, -3);
  if (fraction.endsWith('000')) fraction = fraction.slice(0, -3);
  if (fraction === '000' || /^0+$/u.test(fraction)) return `${sign}${seconds}s`;
  return `${sign}${seconds}.${fraction}s`;
}
