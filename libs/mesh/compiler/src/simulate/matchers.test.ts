import { describe, expect, it } from 'vitest';
import type { Listener } from '@ward/mesh/envoy-api';
import { SimulatorError } from './errors';
import { detectConnection, selectFilterChain } from './filter-chain-match';
import { matchHeader, matchMetadata, matchString, matchValue } from './matchers';
import { normalizeRequestPath } from './path-normalization';
import { compareBytewise, evaluateRbac } from './rbac-engine';
import { fullMatchRegex } from './regex';
import { matchUriTemplate } from './uri-template';

describe('string and header matchers', () => {
  it('ignoreCase applies to exact/prefix/suffix/contains; regexes are full matches', () => {
    expect(matchString({ exact: 'ABC', ignoreCase: true }, 'abc')).toBe(true);
    expect(matchString({ suffix: '.COM', ignoreCase: true }, 'a.com')).toBe(true);
    expect(matchString({ safeRegex: { regex: 'a.c' } }, 'xabcx')).toBe(false);
    expect(matchString({ safeRegex: { regex: '.+' } }, '')).toBe(false);
  });
  it('joins repeated headers with commas and treats absence as no match', () => {
    const headers = new Map([['x-a', ['1', '2']]]);
    expect(matchHeader({ name: 'X-A', stringMatch: { exact: '1,2' } }, headers)).toBe(true);
    expect(matchHeader({ name: 'x-b', presentMatch: true }, headers)).toBe(false);
    expect(matchHeader({ name: 'x-b', stringMatch: { exact: '' }, invertMatch: true }, headers)).toBe(false);
    expect(matchHeader({ name: 'x-a', stringMatch: { exact: '3' }, invertMatch: true }, headers)).toBe(true);
  });
  it('matches metadata values as strings or list elements; a missing path never matches', () => {
    const metadata = new Map([['jwt', { payload: { groups: ['dev', 'admin'], iss: 'i' } }]]);
    const listOrString = { orMatch: { valueMatchers: [{ listMatch: { oneOf: { stringMatch: { exact: 'admin' } } } }, { stringMatch: { exact: 'admin' } }] } };
    expect(matchMetadata({ filter: 'jwt', path: [{ key: 'payload' }, { key: 'groups' }], value: listOrString }, metadata)).toBe(true);
    expect(matchMetadata({ filter: 'jwt', path: [{ key: 'payload' }, { key: 'missing' }], value: listOrString }, metadata)).toBe(false);
    expect(matchMetadata({ filter: 'jwt', path: [{ key: 'payload' }, { key: 'missing' }], value: listOrString, invert: true }, metadata)).toBe(true);
    expect(matchValue({ presentMatch: true }, undefined)).toBe(false);
  });
});

describe('regexes', () => {
  it('refuses constructs RE2 lacks instead of guessing', () => {
    expect(() => fullMatchRegex('(?=a)a')).toThrow(SimulatorError);
    expect(() => fullMatchRegex('(a)\\1')).toThrow(SimulatorError);
    expect(fullMatchRegex('spiffe://.+/ns/foo/(.+/|)sa/x(/.+)?').test('spiffe://td/ns/foo/sa/x/k/v')).toBe(true);
  });
});

describe('paths', () => {
  it('normalizes like the inbound HCM and keeps the query', () => {
    expect(normalizeRequestPath('/a/./b/../c%41%2f?x=/../')).toBe('/a/cA%2F?x=/../');
    expect(normalizeRequestPath('\\admin\\x')).toBe('/admin/x');
  });
  it('uri templates: * is one segment, ** any run', () => {
    expect(matchUriTemplate('/a/*', '/a/b')).toBe(true);
    expect(matchUriTemplate('/a/*', '/a/b/c')).toBe(false);
    expect(matchUriTemplate('/**/t', '/x/y/t')).toBe(true);
    expect(matchUriTemplate('/a.b/*', '/aXb/c')).toBe(false);
  });
});

describe('RBAC engine order', () => {
  it('picks the first matching policy in byte order (rule[10] before rule[2])', () => {
    const any = { permissions: [{ any: true }], principals: [{ any: true }] };
    const rbac = { action: 'DENY' as const, policies: { 'p-rule[2]': any, 'p-rule[10]': any } };
    const attributes = { destinationIp: { bytes: [1, 1, 1, 1] }, destinationPort: 1, directRemoteIp: { bytes: [1, 1, 1, 1] }, remoteIp: { bytes: [1, 1, 1, 1] }, requestedServerName: '', headers: new Map(), metadata: new Map() };
    expect(evaluateRbac(rbac, attributes)).toEqual({ action: 'DENY', allowed: false, matchedPolicy: 'p-rule[10]' });
    expect(evaluateRbac({ policies: {} }, attributes).allowed).toBe(false);
    expect(compareBytewise('\uE000', '\u{1F600}')).toBeLessThan(0);
  });
});

describe('filter chain selection', () => {
  const listener: Listener = {
    listenerFilters: [{ name: 'envoy.filters.listener.tls_inspector', filterDisabled: { destinationPortRange: { start: 8080, end: 8081 } } }],
    filterChains: [
      { name: 'catch-all', filterChainMatch: { transportProtocol: 'raw_buffer' } },
      { name: 'strict-9000', filterChainMatch: { destinationPort: 9000, transportProtocol: 'tls' } },
      { name: 'plain-8080', filterChainMatch: { destinationPort: 8080, transportProtocol: 'raw_buffer' } },
      { name: 'alpn', filterChainMatch: { destinationPort: 7000, transportProtocol: 'tls', applicationProtocols: ['istio'] } },
      { name: 'no-alpn', filterChainMatch: { destinationPort: 7000, transportProtocol: 'tls' } },
    ],
  };
  const pick = (port: number, tls: boolean, alpn: string[] = []): string | undefined => {
    const detected = detectConnection(listener, { destinationPort: port, clientSendsTls: tls, clientAlpn: alpn, sni: '' });
    return selectFilterChain(listener, port, detected)?.chain.name;
  };
  it('never falls back to port-less chains once a port matches', () => {
    expect(pick(9000, false)).toBeUndefined();
    expect(pick(9000, true)).toBe('strict-9000');
    expect(pick(1234, false)).toBe('catch-all');
  });
  it('does not detect TLS where the inspector is disabled', () => {
    expect(pick(8080, true)).toBe('plain-8080');
  });
  it('prefers an ALPN match, else the chain without ALPN', () => {
    expect(pick(7000, true, ['h2', 'istio'])).toBe('alpn');
    expect(pick(7000, true, ['h2'])).toBe('no-alpn');
  });
});
