// IP addresses and CIDR ranges as Go's net/netip parses and prints them (istiod's
// `AddrStrToCidrRange`): a bare address becomes /32 or /128, the address is kept unmasked, IPv6 is
// re-printed in canonical compressed form.
import type { CidrRange } from '@ward/mesh/envoy-api';
import { formatIpAddress, parseIpAddress, parseIpPrefix } from '@ward/mesh/istio-api';

/** A parsed address: 4 or 16 bytes (an IPv6 zone is dropped, as Go's PrefixFrom drops it). */
export interface IpAddress {
  readonly bytes: readonly number[];
}

/** Go's `netip.ParseAddr` (istio-api's exact port); undefined when it would fail. */
export function parseIp(text: string): IpAddress | undefined {
  const parsed = parseIpAddress(text);
  return parsed.ok ? { bytes: parsed.value.bytes } : undefined;
}

/** Go's `netip.Addr.String()` for a zone-less address. */
export function formatIp(address: IpAddress): string {
  return formatIpAddress({ bytes: address.bytes, is6: address.bytes.length === 16, zone: '' });
}

/** Why a value is not an address or CIDR range (a plain value: bad input is common, no stack needed). */
export class CidrParseError {
  readonly message: string;
  constructor(
    readonly value: string,
    goError = `invalid IP address or CIDR range ${JSON.stringify(value)}`,
  ) {
    this.message = goError;
  }
}

/** A parsed range: address as written (unmasked) and prefix length. */
export interface ParsedCidr {
  readonly address: IpAddress;
  readonly prefixLength: number;
}

/** istiod's `AddrStrToPrefix`: `10.0.0.1` → /32, `::1` → /128, `10.0.0.0/8` as written. */
export function parseCidr(value: string): ParsedCidr | CidrParseError {
  if (value === '') return new CidrParseError(value);
  if (value.includes('/')) {
    const prefix = parseIpPrefix(value);
    return prefix.ok ? { address: { bytes: prefix.value.address.bytes }, prefixLength: prefix.value.bits } : new CidrParseError(value, prefix.error);
  }
  const address = parseIpAddress(value);
  return address.ok ? { address: { bytes: address.value.bytes }, prefixLength: address.value.bytes.length * 8 } : new CidrParseError(value, address.error);
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
