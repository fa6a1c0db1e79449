// IP addresses and CIDR ranges as Go's net/netip parses and prints them (istiod's
// `AddrStrToCidrRange`): a bare address becomes /32 or /128, the address is kept unmasked, IPv6 is
// re-printed in canonical compressed form.
import type { CidrRange } from '@ward/mesh/envoy-api';

/** A parsed address: 4 or 16 bytes. */
export interface IpAddress {
  readonly bytes: readonly number[];
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/u;

/** IPv4 dotted decimal, no leading zeros (netip rejects them), or undefined. */
export function parseIPv4(text: string): IpAddress | undefined {
  const match = IPV4.exec(text);
  if (match === null) return undefined;
  const bytes: number[] = [];
  for (const part of match.slice(1)) {
    if (part.length > 1 && part.startsWith('0')) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return { bytes };
}

function parseHextets(text: string): number[] | undefined {
  if (text === '') return [];
  const groups: number[] = [];
  for (const part of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/u.test(part)) return undefined;
    groups.push(Number.parseInt(part, 16));
  }
  return groups;
}

/** IPv6 text (with `::` and an optional trailing dotted IPv4), no zone; or undefined. */
export function parseIPv6(text: string): IpAddress | undefined {
  if (text.includes('%') || !text.includes(':')) return undefined;
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (v4 === undefined) return undefined;
    tail = [((v4.bytes[0] ?? 0) << 8) | (v4.bytes[1] ?? 0), ((v4.bytes[2] ?? 0) << 8) | (v4.bytes[3] ?? 0)];
    head = text.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const doubleColon = head.indexOf('::');
  let groups: number[];
  if (doubleColon >= 0) {
    if (head.indexOf('::', doubleColon + 1) >= 0) return undefined;
    const left = parseHextets(head.slice(0, doubleColon));
    const right = parseHextets(head.slice(doubleColon + 2));
    if (left === undefined || right === undefined) return undefined;
    const missing = 8 - left.length - right.length - tail.length;
    if (missing < 1) return undefined;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right, ...tail];
  } else {
    const parsed = parseHextets(head);
    if (parsed === undefined) return undefined;
    groups = [...parsed, ...tail];
  }
  if (groups.length !== 8) return undefined;
  return { bytes: groups.flatMap((g) => [g >> 8, g & 0xff]) };
}

/** Either family. */
export function parseIp(text: string): IpAddress | undefined {
  return text.includes(':') ? parseIPv6(text) : parseIPv4(text);
}

/** Go's `netip.Addr.String()`: dotted IPv4, RFC 5952 IPv6, `::ffff:a.b.c.d` for mapped IPv4. */
export function formatIp(address: IpAddress): string {
  const b = address.bytes;
  if (b.length === 4) return b.join('.');
  const isMapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  if (isMapped) return `::ffff:${b.slice(12).join('.')}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (g: number | undefined): string => (g ?? 0).toString(16);
  if (bestStart < 0) return groups.map(hex).join(':');
  const left = groups.slice(0, bestStart).map(hex).join(':');
  const right = groups.slice(bestStart + bestLength).map(hex).join(':');
  return `${left}::${right}`;
}

/** Why a value is not an address or CIDR range (a plain value: bad input is common, no stack needed). */
export class CidrParseError {
  readonly message: string;
  constructor(readonly value: string) {
    this.message = `invalid IP address or CIDR range ${JSON.stringify(value)}`;
  }
}

/** A parsed range: address as written (unmasked) and prefix length. */
export interface ParsedCidr {
  readonly address: IpAddress;
  readonly prefixLength: number;
}

/** `10.0.0.1` → /32, `::1` → /128, `10.0.0.0/8` as written. */
export function parseCidr(value: string): ParsedCidr | CidrParseError {
  if (value === '') return new CidrParseError(value);
  const slash = value.indexOf('/');
  const address = parseIp(slash < 0 ? value : value.slice(0, slash));
  if (address === undefined) return new CidrParseError(value);
  const maxBits = address.bytes.length * 8;
  if (slash < 0) return { address, prefixLength: maxBits };
  const bits = value.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/u.test(bits) || Number(bits) > maxBits) return new CidrParseError(value);
  return { address, prefixLength: Number(bits) };
}

/** The Envoy CidrRange of a policy value, or an error for a value netip would reject. */
export function cidrRange(value: string): CidrRange | CidrParseError {
  const parsed = parseCidr(value);
  if (parsed instanceof CidrParseError) return parsed;
  return { addressPrefix: formatIp(parsed.address), prefixLen: parsed.prefixLength };
}

/** True when `address` lies in the range (the range is masked here, as Envoy does). */
export function cidrContains(range: ParsedCidr, address: IpAddress): boolean {
  if (range.address.bytes.length !== address.bytes.length) return false;
  let remaining = range.prefixLength;
  for (let i = 0; i < address.bytes.length && remaining > 0; i++) {
    const bits = Math.min(8, remaining);
    const mask = (0xff << (8 - bits)) & 0xff;
    if (((range.address.bytes[i] ?? 0) & mask) !== ((address.bytes[i] ?? 0) & mask)) return false;
    remaining -= bits;
  }
  return true;
}
