import { parseGoDuration } from '@ward/shared/clock';

/** Milliseconds (possibly fractional) of a Go duration string (etcd's `ttl=` option), or undefined when Go would reject it. */
export function parseGoDurationMs(text: string): number | undefined {
  const nanos = parseGoDuration(text);
  return nanos === undefined ? undefined : Number(nanos) / 1e6;
}
