import { describe, expect, it } from 'vitest';
import { formatIpAddress, parseIpAddress, parseIpPrefix } from '../index';

describe('Go netip.ParseAddr', () => {
  const good: [string, string][] = [
    ['1.2.3.4', '1.2.3.4'],
    ['0.0.0.0', '0.0.0.0'],
    ['::', '::'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:0:2:0:3:0:4:0', '1:0:2:0:3:0:4:0'],
    ['::ffff:1.2.3.4', '::ffff:1.2.3.4'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
    ['1:2:3:4:5:6:7.8.9.10', '1:2:3:4:5:6:708:90a'],
  ];
  it.each(good)('%s parses and prints as %s', (text, printed) => {
    const parsed = parseIpAddress(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(formatIpAddress(parsed.value)).toBe(printed);
  });

  const bad: [string, string][] = [
    ['', 'ParseAddr(""): unable to parse IP'],
    ['999', 'ParseAddr("999"): unable to parse IP'],
    ['%eth0', 'ParseAddr("%eth0"): missing IPv6 address'],
    ['1.2.3', 'ParseAddr("1.2.3"): IPv4 address too short'],
    ['1.2.3.4.5', 'ParseAddr("1.2.3.4.5"): IPv4 address too long'],
    ['10.0.0.256', 'ParseAddr("10.0.0.256"): IPv4 field has value >255'],
    ['192.168.1.01', 'ParseAddr("192.168.1.01"): IPv4 field has octet with leading zero'],
    ['1.2.3.4.', 'ParseAddr("1.2.3.4."): IPv4 field must have at least one digit (at ".")'],
    ['0x7f.0.0.1', 'ParseAddr("0x7f.0.0.1"): unexpected character (at "x7f.0.0.1")'],
    ['1::2::3', 'ParseAddr("1::2::3"): multiple :: in address (at ":3")'],
    ['1:2:3:4:5:6:7:8:9', 'ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")'],
    ['1:2:3:4:5:6:7:8:', 'ParseAddr("1:2:3:4:5:6:7:8:"): colon must be followed by more characters (at ":")'],
    ['1:2:3:4:5:6:7', 'ParseAddr("1:2:3:4:5:6:7"): address string too short'],
    ['1:2:3:4:5:6:7:8::', 'ParseAddr("1:2:3:4:5:6:7:8::"): the :: must expand to at least one field of zeros'],
    ['12345::', 'ParseAddr("12345::"): IPv6 field has value >=2^16 (at "12345::")'],
    ['fe80::1%', 'ParseAddr("fe80::1%"): zone must be a non-empty string'],
  ];
  it.each(bad)('%j fails with Go\'s text', (text, error) => {
    expect(parseIpAddress(text)).toEqual({ ok: false, error });
  });
});

describe('Go netip.ParsePrefix', () => {
  it('keeps the address unmasked', () => {
    const parsed = parseIpPrefix('5.6.7.8/16');
    expect(parsed.ok && [formatIpAddress(parsed.value.address), parsed.value.bits]).toEqual(['5.6.7.8', 16]);
  });

  const bad: [string, string][] = [
    ['10.0.0.0', 'netip.ParsePrefix("10.0.0.0"): no \'/\''],
    ['10.0.0.0/33', 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'],
    ['::/129', 'netip.ParsePrefix("::/129"): prefix length out of range'],
    ['10.0.0.0/08', 'netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"'],
    ['10.0.0.0/', 'netip.ParsePrefix("10.0.0.0/"): bad bits after slash: ""'],
    ['fe80::1%eth0/64', 'netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix'],
    ['999/8', 'netip.ParsePrefix("999/8"): ParseAddr("999"): unable to parse IP'],
  ];
  it.each(bad)('%j fails with Go\'s text', (text, error) => {
    expect(parseIpPrefix(text)).toEqual({ ok: false, error });
  });
});
