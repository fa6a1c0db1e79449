/**
 * IP address and CIDR parsing with the exact acceptance rules and error texts of Go's
 * `net/netip` (`ParseAddr`, `ParsePrefix`), which istiod uses for `ipBlocks`, `source.ip` and
 * friends, plus Go's canonical text form of an address.
 */
import { goQuote } from './go-quote';

/** A parsed address: 4 or 16 bytes, and the IPv6 zone if any. */
export interface IpAddress {
  readonly bytes: readonly number[];
  readonly is6: boolean;
  readonly zone: string;
}

/** A parsed prefix; the address is kept as written (not masked), as Go's `ParsePrefix` does. */
export interface IpPrefix {
  readonly address: IpAddress;
  readonly bits: number;
}

export type ParseOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const INT64_MAX = BigInt('9223372036854775807');

function addrError(input: string, message: string, at = ''): ParseOutcome<never> {
  const suffix = at === '' ? '' : ` (at ${goQuote(at)})`;
  return { ok: false, error: `ParseAddr(${goQuote(input)}): ${message}${suffix}` };
}

function parseV4Fields(text: string): { fields: number[] } | { message: string; at: string } {
  const fields: number[] = [];
  let value = 0;
  let digits = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (char >= 48 && char <= 57) {
      if (digits === 1 && value === 0) return { message: 'IPv4 field has octet with leading zero', at: '' };
      value = value * 10 + (char - 48);
      digits++;
      if (value > 255) return { message: 'IPv4 field has value >255', at: '' };
    } else if (text[index] === '.') {
      if (index === 0 || index === text.length - 1 || text[index - 1] === '.') {
        return { message: 'IPv4 field must have at least one digit', at: text.slice(index) };
      }
      if (fields.length === 3) return { message: 'IPv4 address too long', at: '' };
      fields.push(value);
      value = 0;
      digits = 0;
    } else {
      return { message: 'unexpected character', at: text.slice(index) };
    }
  }
  if (fields.length < 3) return { message: 'IPv4 address too short', at: '' };
  fields.push(value);
  return { fields };
}

function parseV4(text: string): ParseOutcome<IpAddress> {
  const parsed = parseV4Fields(text);
  if ('message' in parsed) return addrError(text, parsed.message, parsed.at);
  return { ok: true, value: { bytes: parsed.fields, is6: false, zone: '' } };
}

function hexGroup(text: string): { value: number; length: number } | { overflow: true } {
  let value = 0;
  let length = 0;
  while (length < text.length && /[0-9a-fA-F]/.test(text.charAt(length))) {
    value = value * 16 + parseInt(text.charAt(length), 16);
    length++;
    if (value > 0xffff) return { overflow: true };
  }
  return { value, length };
}

interface V6State {
  rest: string;
  index: number;
  ellipsis: number;
  readonly bytes: number[];
}

/** One step of the IPv6 loop; returns an error, 'done' or 'more'. */
function parseV6Group(input: string, state: V6State): ParseOutcome<never> | 'done' | 'more' {
  const group = hexGroup(state.rest);
  if ('overflow' in group) return addrError(input, 'IPv6 field has value >=2^16', state.rest);
  if (group.length === 0) return addrError(input, 'each colon-separated field must have at least one digit', state.rest);
  if (state.rest.charAt(group.length) === '.') {
    if (state.ellipsis < 0 && state.index !== 12) return addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', state.rest);
    if (state.index + 4 > 16) return addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', state.rest);
    const v4 = parseV4Fields(state.rest);
    if ('message' in v4) return addrError(input, `ParseAddr(${goQuote(state.rest)}): ${v4.message}${v4.at === '' ? '' : ` (at ${goQuote(v4.at)})`}`, state.rest);
    v4.fields.forEach((byte, offset) => (state.bytes[state.index + offset] = byte));
    state.index += 4;
    state.rest = '';
    return 'done';
  }
  state.bytes[state.index] = group.value >> 8;
  state.bytes[state.index + 1] = group.value & 0xff;
  state.index += 2;
  state.rest = state.rest.slice(group.length);
  if (state.rest === '') return 'done';
  if (state.rest[0] !== ':') return addrError(input, 'unexpected character, want colon', state.rest);
  if (state.rest.length === 1) return addrError(input, 'colon must be followed by more characters', state.rest);
  state.rest = state.rest.slice(1);
  if (state.rest[0] === ':') {
    if (state.ellipsis >= 0) return addrError(input, 'multiple :: in address', state.rest);
    state.ellipsis = state.index;
    state.rest = state.rest.slice(1);
    if (state.rest === '') return 'done';
  }
  return 'more';
}

function parseV6(input: string): ParseOutcome<IpAddress> {
  let text = input;
  let zone = '';
  const percent = text.indexOf('%');
  if (percent !== -1) {
    zone = text.slice(percent + 1);
    text = text.slice(0, percent);
    if (zone === '') return addrError(input, 'zone must be a non-empty string');
  }
  const state: V6State = { rest: text, index: 0, ellipsis: -1, bytes: new Array<number>(16).fill(0) };
  if (text.startsWith('::')) {
    state.ellipsis = 0;
    state.rest = text.slice(2);
    if (state.rest === '') return { ok: true, value: { bytes: state.bytes, is6: true, zone } };
  }
  while (state.index < 16) {
    const step = parseV6Group(input, state);
    if (step === 'done') break;
    if (step !== 'more') return step;
  }
  if (state.rest !== '') return addrError(input, 'trailing garbage after address', state.rest);
  if (state.index < 16) {
    if (state.ellipsis < 0) return addrError(input, 'address string too short');
    const gap = 16 - state.index;
    const head = state.bytes.slice(0, state.ellipsis);
    const tail = state.bytes.slice(state.ellipsis, state.index);
    return { ok: true, value: { bytes: [...head, ...new Array<number>(gap).fill(0), ...tail], is6: true, zone } };
  }
  if (state.ellipsis >= 0) return addrError(input, 'the :: must expand to at least one field of zeros');
  return { ok: true, value: { bytes: state.bytes, is6: true, zone } };
}

/** Go's `netip.ParseAddr`. */
export function parseIpAddress(text: string): ParseOutcome<IpAddress> {
  for (const char of text) {
    if (char === '.') return parseV4(text);
    if (char === ':') return parseV6(text);
    if (char === '%') return addrError(text, 'missing IPv6 address');
  }
  return addrError(text, 'unable to parse IP');
}

/** Go's `netip.ParsePrefix`. */
export function parseIpPrefix(text: string): ParseOutcome<IpPrefix> {
  const fail = (message: string): ParseOutcome<never> => ({ ok: false, error: `netip.ParsePrefix(${goQuote(text)}): ${message}` });
  const slash = text.lastIndexOf('/');
  if (slash < 0) return fail("no '/'");
  const address = parseIpAddress(text.slice(0, slash));
  if (!address.ok) return fail(address.error);
  if (address.value.is6 && address.value.zone !== '') return fail('IPv6 zones cannot be present in a prefix');
  const bitsText = text.slice(slash + 1);
  if (bitsText.length > 1 && !/^[1-9]/.test(bitsText)) return fail(`bad bits after slash: ${goQuote(bitsText)}`);
  // strconv.Atoi: digits only here (signs were refused above), and it must fit an int64.
  if (!/^[0-9]+$/.test(bitsText) || BigInt(bitsText) > INT64_MAX) return fail(`bad bits after slash: ${goQuote(bitsText)}`);
  const bits = Number(bitsText);
  if (bits > (address.value.is6 ? 128 : 32)) return fail('prefix length out of range');
  return { ok: true, value: { address: address.value, bits } };
}

function formatV6(bytes: readonly number[]): string {
  const groups = Array.from({ length: 8 }, (_, index) => ((bytes[index * 2] ?? 0) << 8) | (bytes[index * 2 + 1] ?? 0));
  let zeroStart = -1;
  let zeroLength = 0;
  for (let start = 0; start < 8; start++) {
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start >= 2 && end - start > zeroLength) {
      zeroStart = start;
      zeroLength = end - start;
    }
  }
  let text = '';
  for (let index = 0; index < 8; index++) {
    if (index === zeroStart) {
      text += '::';
      index += zeroLength - 1;
      continue;
    }
    if (index > 0 && !text.endsWith(':')) text += ':';
    text += (groups[index] ?? 0).toString(16);
  }
  return text;
}

/** Go's `Addr.String()`: dotted IPv4, RFC 5952 IPv6, `::ffff:a.b.c.d` for IPv4-mapped. */
export function formatIpAddress(address: IpAddress): string {
  if (!address.is6) return address.bytes.join('.');
  const zone = address.zone === '' ? '' : `%${address.zone}`;
  const mapped = address.bytes.slice(0, 10).every((byte) => byte === 0) && address.bytes[10] === 0xff && address.bytes[11] === 0xff;
  if (mapped) return `::ffff:${address.bytes.slice(12).join('.')}${zone}`;
  return `${formatV6(address.bytes)}${zone}`;
}
