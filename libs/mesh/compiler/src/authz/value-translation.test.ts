// Tables for the value-level translations (spec §1.4-1.6): string helpers, trust domains, CIDRs,
// JWT request principals, claim keys, durations.
import { describe, expect, it } from 'vitest';
import { cidrContains, cidrRange, formatIp, parseCidr, parseIp, CidrParseError } from './cidr';
import { canonicalDuration } from './duration';
import { generateExtendedPrincipal, generatePermission, generatePrincipal, namesInNestedBrackets, serviceAccountRegex, type GeneratorContext } from './generators';
import { headerMatcher, quoteMeta, stringMatcher, stringMatcherWithPrefix } from './string-matchers';
import { expandTrustDomainAliases, replaceTrustDomainAliases } from './trust-domain';

const HTTP: GeneratorContext = { forTcp: false, policyNamespace: 'foo', useFilterState: false };

describe('string helpers', () => {
  it('(A) generic: * → .+, *x → suffix, x* → prefix, else exact; *x* is suffix "x*"', () => {
    expect(['*', '*abc', 'abc*', 'a*c', '*abc*'].map(stringMatcher)).toEqual([
      { safeRegex: { regex: '.+' } },
      { suffix: 'abc' },
      { prefix: 'abc' },
      { exact: 'a*c' },
      { suffix: 'abc*' },
    ]);
  });
  it('(B) SPIFFE: no prefix for *, quoted regex for *x, plain prefix/exact otherwise', () => {
    expect(['*', '*bar/ns/foo/sa/rule[0]', 'abc*', 'abc'].map((v) => stringMatcherWithPrefix(v, 'spiffe://'))).toEqual([
      { safeRegex: { regex: '.+' } },
      { safeRegex: { regex: 'spiffe://.*bar/ns/foo/sa/rule\\[0\\]' } },
      { prefix: 'spiffe://abc' },
      { exact: 'spiffe://abc' },
    ]);
  });
  it('(C) headers: * → presentMatch, ignoreCase only for hosts', () => {
    expect(headerMatcher(':method', '*', false)).toEqual({ name: ':method', presentMatch: true });
    expect(headerMatcher(':authority', '*.a.com', true)).toEqual({ name: ':authority', stringMatch: { suffix: '.a.com', ignoreCase: true } });
    expect(headerMatcher('x', 'v*', false)).toEqual({ name: 'x', stringMatch: { prefix: 'v' } });
  });
  it('quotes like Go regexp.QuoteMeta', () => {
    expect(quoteMeta('a.b+c*d?e(f)g|h[i]j{k}l^m$n\\o')).toBe('a\\.b\\+c\\*d\\?e\\(f\\)g\\|h\\[i\\]j\\{k\\}l\\^m\\$n\\\\o');
  });
});

describe('principal-side generators', () => {
  it('namespaces become a regex with quoted pieces', () => {
    expect(generatePrincipal('source.namespace', 'source.namespace', 'ns-prefix-*', HTTP)).toEqual({ authenticated: { principalName: { safeRegex: { regex: '.*/ns/ns-prefix-.*/.*' } } } });
    expect(generatePrincipal('source.namespace', 'source.namespace', 'rule[0]-ns', HTTP)).toEqual({ authenticated: { principalName: { safeRegex: { regex: '.*/ns/rule\\[0\\]-ns/.*' } } } });
  });
  it('service accounts default to the policy namespace and pin the sa segment', () => {
    expect(serviceAccountRegex('foo', 'sa-only')).toBe('spiffe://.+/ns/foo/(.+/|)sa/sa-only(/.+)?');
    expect(serviceAccountRegex('foo', 'bar/sa.x')).toBe('spiffe://.+/ns/bar/(.+/|)sa/sa\\.x(/.+)?');
  });
  it('trust domains: exact → prefix with slash, * → spiffe://, partial → regex', () => {
    const td = (v: string): unknown => generatePrincipal('source.trustDomain', 'source.trustDomain', v, HTTP);
    expect(td('cluster.local')).toEqual({ authenticated: { principalName: { prefix: 'spiffe://cluster.local/' } } });
    expect(td('*')).toEqual({ authenticated: { principalName: { prefix: 'spiffe://' } } });
    expect(td('bad*')).toEqual({ authenticated: { principalName: { safeRegex: { regex: 'spiffe://bad[^/]*/.*' } } } });
  });
  it('uses filterState on waypoints', () => {
    expect(generatePrincipal('source.principal', 'source.principal', 'a/b', { ...HTTP, useFilterState: true })).toEqual({ filterState: { key: 'io.istio.peer_principal', stringMatch: { exact: 'spiffe://a/b' } } });
  });
  it('refuses HTTP-only attributes on TCP, and header names Envoy would reject', () => {
    expect(generatePrincipal('request.headers', 'request.headers[x]', 'v', { ...HTTP, forTcp: true })).toMatchObject({ failure: true, httpOnly: true });
    expect(generatePrincipal('request.headers', 'request.headers[]', 'v', HTTP)).toMatchObject({ failure: true, httpOnly: false });
    expect(generatePrincipal('request.headers', 'request.headersX', 'v', HTTP)).toMatchObject({ failure: true, message: 'expecting format [<NAME>], but found X' });
  });
});

describe('request principals (iss/sub split at the last slash)', () => {
  const matchers = (value: string): unknown => {
    const principal = generateExtendedPrincipal('request.auth.principal', 'request.auth.principal', [value], HTTP) as { andIds: { ids: Array<{ metadata: { value: { stringMatch: unknown } } }> } };
    return principal.andIds.ids.map((id) => id.metadata.value.stringMatch);
  };
  const ANY = { safeRegex: { regex: '.+' } };
  const cases: Array<[string, unknown[]]> = [
    ['*', [ANY, ANY]],
    ['*/sub', [ANY, { exact: 'sub' }]],
    ['*iss/sub', [{ suffix: 'iss' }, { exact: 'sub' }]],
    ['*iss', [ANY, { suffix: 'iss' }]],
    ['https://example.com/*', [{ exact: 'https://example.com' }, ANY]],
    ['iss/sub*', [{ exact: 'iss' }, { prefix: 'sub' }]],
    ['iss*', [{ prefix: 'iss' }, ANY]],
    ['https://example.com/alice', [{ exact: 'https://example.com' }, { exact: 'alice' }]],
    ['issuer', [{ exact: 'issuer' }, { exact: '' }]],
  ];
  for (const [value, expected] of cases) it(value, () => expect(matchers(value)).toEqual(expected));
  it('several values are or-ed', () => {
    expect(generateExtendedPrincipal('request.auth.principal', 'k', ['a/b', 'c/d'], HTTP)).toMatchObject({ orIds: { ids: [{ andIds: {} }, { andIds: {} }] } });
  });
});

describe('claim keys', () => {
  it('splits nested brackets and treats irregular ones as one name', () => {
    expect(namesInNestedBrackets('[a][b]')).toEqual(['a', 'b']);
    expect(namesInNestedBrackets('[a.b]')).toEqual(['a.b']);
    expect(namesInNestedBrackets('[a[b]]')).toEqual(['a[b]']);
    expect(namesInNestedBrackets('a')).toMatchObject({ failure: true });
  });
});

describe('trust-domain aliases (istiod bundle_test cases)', () => {
  const cases: Array<[string, string[], string[], string[]]> = [
    ['no aliases', ['cluster.local'], ['cluster.local/ns/foo/sa/bar'], ['cluster.local/ns/foo/sa/bar']],
    ['* kept', ['cluster.local'], ['*'], ['*']],
    ['*/... kept', ['cluster.local'], ['*/ns/foo/sa/bar'], ['*/ns/foo/sa/bar']],
    ['one alias', ['td2', 'td1'], ['td1/ns/foo/sa/bar'], ['td2/ns/foo/sa/bar', 'td1/ns/foo/sa/bar']],
    ['cluster.local means local', ['td1', 'cluster.local'], ['cluster.local/ns/foo/sa/bar', 'cluster.local/ns/yyy/sa/zzz'], ['td1/ns/foo/sa/bar', 'cluster.local/ns/foo/sa/bar', 'td1/ns/yyy/sa/zzz', 'cluster.local/ns/yyy/sa/zzz']],
    ['wildcards kept', ['td1', 'cluster.local'], ['*/ns/foo/sa/bar', '*sa/zzz', '*'], ['*/ns/foo/sa/bar', '*sa/zzz', '*']],
    ['suffix-pattern trust domain', ['td2', 'foo-td1', 'cluster.local'], ['*-td1/ns/foo/sa/bar'], ['td2/ns/foo/sa/bar', '*-td1/ns/foo/sa/bar', 'cluster.local/ns/foo/sa/bar']],
    ['foreign kept', ['td1', 'td2'], ['some-td/ns/foo/sa/bar'], ['some-td/ns/foo/sa/bar']],
    ['alias match', ['td1', 'td2', 'some-td'], ['some-td/ns/foo/sa/bar'], ['td1/ns/foo/sa/bar', 'td2/ns/foo/sa/bar', 'some-td/ns/foo/sa/bar']],
    ['empty trust domain kept', ['new-td', 'td2', 'td3'], ['/ns/some-ns/sa/some-sa'], ['/ns/some-ns/sa/some-sa']],
    ['no duplicates for a prefix pattern', ['new-td', 'old-td'], ['*-td/ns/some-ns/sa/some-sa'], ['*-td/ns/some-ns/sa/some-sa']],
  ];
  for (const [name, bundle, input, expected] of cases) it(name, () => expect(replaceTrustDomainAliases(input, bundle).principals).toEqual(expected));
  it('expands trustDomains values naming a bundle entry to the whole bundle', () => {
    expect(expandTrustDomainAliases(['td2', 'x', 'td1'], ['td1', 'td2'])).toEqual(['td1', 'td2', 'x']);
  });
});

describe('CIDR ranges (Go net/netip)', () => {
  it('keeps the address unmasked and adds /32 or /128', () => {
    expect(cidrRange('5.6.7.8/16')).toEqual({ addressPrefix: '5.6.7.8', prefixLen: 16 });
    expect(cidrRange('1.2.3.4')).toEqual({ addressPrefix: '1.2.3.4', prefixLen: 32 });
    expect(cidrRange('2001:DB8:0:0::1')).toEqual({ addressPrefix: '2001:db8::1', prefixLen: 128 });
    expect(cidrRange('::ffff:1.2.3.4/120')).toEqual({ addressPrefix: '::ffff:1.2.3.4', prefixLen: 120 });
  });
  it('rejects what netip rejects', () => {
    for (const bad of ['', '1.2.3', '01.2.3.4', '1.2.3.256', '1.2.3.4/33', '1.2.3.4/08', 'fe80::1%eth0/64', '1::2::3', 'x']) {
      expect(cidrRange(bad), bad).toBeInstanceOf(CidrParseError);
    }
  });
  it('drops the zone of a bare IPv6 address (Go PrefixFrom) and reports netip errors', () => {
    expect(cidrRange('fe80::1%eth0')).toEqual({ addressPrefix: 'fe80::1', prefixLen: 128 });
    expect((cidrRange('1.2.3.4/33') as CidrParseError).message).toBe('netip.ParsePrefix("1.2.3.4/33"): prefix length out of range');
  });
  it('prints IPv6 per RFC 5952', () => {
    expect(['1:0:0:1:0:0:0:1', '0:0:0:0:0:0:0:0', '1:0:1:0:1:0:1:0', '::0:1'].map((t) => formatIp(parseIp(t) ?? { bytes: [] }))).toEqual(['1:0:0:1::1', '::', '1:0:1:0:1:0:1:0', '::1']);
  });
  it('tests membership with masking', () => {
    const range = parseCidr('10.1.2.3/8');
    if (range instanceof CidrParseError) throw new Error('parses');
    expect(cidrContains(range, parseIp('10.200.0.1') ?? { bytes: [] })).toBe(true);
    expect(cidrContains(range, parseIp('11.0.0.1') ?? { bytes: [] })).toBe(false);
    expect(cidrContains(range, parseIp('::1') ?? { bytes: [] })).toBe(false);
  });
});

describe('ports and templates', () => {
  it('parses ports like strconv.ParseUint with 65535 as the maximum', () => {
    expect(generatePermission('destination.port', 'destination.port', '65535', HTTP)).toEqual({ destinationPort: 65535 });
    for (const bad of ['65536', '-1', '8080a', '', '1e3']) expect(generatePermission('destination.port', 'destination.port', bad, HTTP), bad).toMatchObject({ failure: true });
  });
  it('turns {*} and {**} into an Envoy uri_template', () => {
    expect(generatePermission('paths', 'path-matcher', '/{**}/a/{*}', HTTP)).toMatchObject({ uriTemplate: { name: 'uri-template', typedConfig: { pathTemplate: '/**/a/*' } } });
  });
});

describe('durations', () => {
  it('prints canonical protojson durations', () => {
    expect(['0.002s', '10s', '10.000s', '1.5s', '0.000000001s', '-0s', '600.100200s'].map(canonicalDuration)).toEqual(['0.002s', '10s', '10s', '1.500s', '0.000000001s', '0s', '600.100200s']);
    expect(canonicalDuration('2ms')).toBeUndefined();
  });
});
