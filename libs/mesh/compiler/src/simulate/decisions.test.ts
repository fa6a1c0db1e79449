// Allow/deny decisions of spec §7 (checkable cases), as a table: policies, traffic, outcome.
import { describe, expect, it } from 'vitest';
import type { ExtensionProvider } from '../input';
import { HTTPBIN, compileYaml, policyYaml } from '../testing';
import { simulate } from './simulate';
import type { SimulatedHttpRequest, SimulatedTraffic } from './traffic';

type Outcome = 'allowed' | 'denied' | 'reset';

interface DecisionCase {
  readonly name: string;
  readonly policies: string;
  readonly traffic: SimulatedTraffic;
  readonly outcome: Outcome;
  readonly policy?: string;
}

function http(request: Partial<SimulatedHttpRequest>, over: Partial<SimulatedTraffic> = {}): SimulatedTraffic {
  return { port: 8080, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/a/sa/b', http: { method: 'GET', path: '/', host: 'httpbin', ...request }, ...over };
}

const allow = (spec: string): string => policyYaml('allow', `  action: ALLOW\n${spec}`);
const deny = (spec: string): string => policyYaml('deny', `  action: DENY\n${spec}`);

const CASES: DecisionCase[] = [
  { name: '2: spec {} allows nothing', policies: policyYaml('none', '  {}'), traffic: http({}), outcome: 'denied' },
  { name: '3: rules [{}] allows everything', policies: allow('  rules:\n  - {}'), traffic: http({}, { transport: 'plaintext' }), outcome: 'allowed', policy: 'ns[foo]-policy[allow]-rule[0]' },
  { name: '19: principals * needs mTLS (plaintext denied)', policies: allow('  rules:\n  - from:\n    - source:\n        principals: ["*"]'), traffic: http({}, { transport: 'plaintext' }), outcome: 'denied' },
  { name: '19: principals * admits any mTLS peer', policies: allow('  rules:\n  - from:\n    - source:\n        principals: ["*"]'), traffic: http({}), outcome: 'allowed' },
  { name: '24: serviceAccount sa-only rejects sa-only-x', policies: allow('  rules:\n  - from:\n    - source:\n        serviceAccounts: ["sa-only"]'), traffic: http({}, { sourcePrincipal: 'cluster.local/ns/foo/sa/sa-only-x' }), outcome: 'denied' },
  { name: '24: serviceAccount sa-only admits sa-only/k/v', policies: allow('  rules:\n  - from:\n    - source:\n        serviceAccounts: ["sa-only"]'), traffic: http({}, { sourcePrincipal: 'cluster.local/ns/foo/sa/sa-only/k/v' }), outcome: 'allowed' },
  { name: '27: hosts match case-insensitively', policies: allow('  rules:\n  - to:\n    - operation:\n        hosts: ["Exact.com"]'), traffic: http({ host: 'exact.COM' }), outcome: 'allowed' },
  { name: '29: methods are case-sensitive', policies: allow('  rules:\n  - to:\n    - operation:\n        methods: ["get"]'), traffic: http({ method: 'GET' }), outcome: 'denied' },
  { name: '30: /prefix/* matches with a query', policies: allow('  rules:\n  - to:\n    - operation:\n        paths: ["/prefix/*"]'), traffic: http({ path: '/prefix/x?y=1' }), outcome: 'allowed' },
  { name: '30: /prefix/* does not match /prefix', policies: allow('  rules:\n  - to:\n    - operation:\n        paths: ["/prefix/*"]'), traffic: http({ path: '/prefix' }), outcome: 'denied' },
  { name: '31: {*} matches one segment', policies: allow('  rules:\n  - to:\n    - operation:\n        paths: ["/path/template/{*}"]'), traffic: http({ path: '/path/template/a' }), outcome: 'allowed' },
  { name: '31: {*} does not match two segments', policies: allow('  rules:\n  - to:\n    - operation:\n        paths: ["/path/template/{*}"]'), traffic: http({ path: '/path/template/a/b' }), outcome: 'denied' },
  { name: '33: ports name the container port, not the service port', policies: allow('  rules:\n  - to:\n    - operation:\n        ports: ["80"]'), traffic: http({}), outcome: 'denied' },
  { name: '37: list claim matches one element', policies: allow('  rules:\n  - when:\n    - key: request.auth.claims[groups]\n      values: ["admin"]'), traffic: http({ jwtClaims: { groups: ['dev', 'admin'] } }), outcome: 'allowed' },
  { name: '37: string claim matches too', policies: allow('  rules:\n  - when:\n    - key: request.auth.claims[groups]\n      values: ["admin"]'), traffic: http({ jwtClaims: { groups: 'admin' } }), outcome: 'allowed' },
  { name: '36: requestPrincipals without a token never match', policies: allow('  rules:\n  - from:\n    - source:\n        requestPrincipals: ["*"]'), traffic: http({}), outcome: 'denied' },
  { name: '34: requestPrincipals iss/* matches a token of that issuer', policies: allow('  rules:\n  - from:\n    - source:\n        requestPrincipals: ["https://example.com/*"]'), traffic: http({ requestPrincipal: 'https://example.com/alice' }), outcome: 'allowed' },
  { name: '38: header * requires the header', policies: allow('  rules:\n  - when:\n    - key: request.headers[X-Token]\n      values: ["*"]'), traffic: http({}), outcome: 'denied' },
  { name: '38: header * with the header', policies: allow('  rules:\n  - when:\n    - key: request.headers[X-Token]\n      values: ["*"]'), traffic: http({ headers: { 'x-token': 'v' } }), outcome: 'allowed' },
  { name: '47: DENY methods GET closes TCP connections', policies: deny('  rules:\n  - to:\n    - operation:\n        methods: ["GET"]'), traffic: { port: 9000, transport: 'mtls' }, outcome: 'denied' },
  { name: '48: DENY methods+ports 8080 spares TCP 9000', policies: deny('  rules:\n  - to:\n    - operation:\n        methods: ["GET"]\n        ports: ["8080"]'), traffic: { port: 9000, transport: 'mtls' }, outcome: 'allowed' },
  { name: '49: DENY on a header denies all TCP', policies: deny('  rules:\n  - when:\n    - key: request.headers[x]\n      values: ["a"]'), traffic: { port: 9000, transport: 'plaintext' }, outcome: 'denied' },
  { name: '50: DENY ns-1 + GET denies ns-1 on any TCP port', policies: deny('  rules:\n  - from:\n    - source:\n        namespaces: ["ns-1"]\n    to:\n    - operation:\n        methods: ["GET"]'), traffic: { port: 9000, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/ns-1/sa/x' }, outcome: 'denied' },
  { name: '50: ... and spares other namespaces', policies: deny('  rules:\n  - from:\n    - source:\n        namespaces: ["ns-1"]\n    to:\n    - operation:\n        methods: ["GET"]'), traffic: { port: 9000, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/ns-2/sa/x' }, outcome: 'allowed' },
  { name: '53: ALLOW notNamespaces admits plaintext callers', policies: allow('  rules:\n  - from:\n    - source:\n        notNamespaces: ["bad"]'), traffic: http({}, { transport: 'plaintext' }), outcome: 'allowed' },
  { name: '53: ... and rejects the bad namespace', policies: allow('  rules:\n  - from:\n    - source:\n        notNamespaces: ["bad"]'), traffic: http({}, { sourcePrincipal: 'cluster.local/ns/bad/sa/x' }), outcome: 'denied' },
  { name: '54: DENY notNamespaces denies plaintext callers', policies: deny('  rules:\n  - from:\n    - source:\n        notNamespaces: ["good"]'), traffic: http({}, { transport: 'plaintext' }), outcome: 'denied' },
  { name: '54: ... and admits the good namespace', policies: deny('  rules:\n  - from:\n    - source:\n        notNamespaces: ["good"]'), traffic: http({}, { sourcePrincipal: 'cluster.local/ns/good/sa/x' }), outcome: 'allowed' },
  { name: '55: DENY /admin* wins over ALLOW {}', policies: deny('  rules:\n  - to:\n    - operation:\n        paths: ["/admin*"]') + allow('  rules:\n  - {}'), traffic: http({ path: '/admin/x' }), outcome: 'denied', policy: 'ns[foo]-policy[deny]-rule[0]' },
  { name: '55: ... /x passes both', policies: deny('  rules:\n  - to:\n    - operation:\n        paths: ["/admin*"]') + allow('  rules:\n  - {}'), traffic: http({ path: '/x' }), outcome: 'allowed', policy: 'ns[foo]-policy[allow]-rule[0]' },
  { name: '56: DENY notValues denies a request without the header', policies: deny('  rules:\n  - when:\n    - key: request.headers[x-a]\n      notValues: ["ok"]'), traffic: http({}), outcome: 'denied' },
  { name: '56: ... and admits x-a: ok', policies: deny('  rules:\n  - when:\n    - key: request.headers[x-a]\n      notValues: ["ok"]'), traffic: http({ headers: { 'x-a': 'ok' } }), outcome: 'allowed' },
  { name: '57: *.example.com admits A.EXAMPLE.COM', policies: allow('  rules:\n  - to:\n    - operation:\n        hosts: ["*.example.com"]'), traffic: http({ host: 'A.EXAMPLE.COM' }), outcome: 'allowed' },
  { name: '57: *.example.com rejects example.com', policies: allow('  rules:\n  - to:\n    - operation:\n        hosts: ["*.example.com"]'), traffic: http({ host: 'example.com' }), outcome: 'denied' },
  { name: '58: ipBlocks checks the direct peer', policies: allow('  rules:\n  - from:\n    - source:\n        ipBlocks: ["10.0.0.0/8"]'), traffic: http({}, { sourceIp: '10.1.2.3' }), outcome: 'allowed' },
  { name: '58: ... not the original client behind a proxy', policies: allow('  rules:\n  - from:\n    - source:\n        ipBlocks: ["10.0.0.0/8"]'), traffic: http({}, { sourceIp: '192.168.0.1', remoteIp: '10.1.2.3' }), outcome: 'denied' },
  { name: '58: remoteIpBlocks checks the original client', policies: allow('  rules:\n  - from:\n    - source:\n        remoteIpBlocks: ["10.0.0.0/8"]'), traffic: http({}, { sourceIp: '192.168.0.1', remoteIp: '10.1.2.3' }), outcome: 'allowed' },
  { name: 'remoteIpBlocks read the rightmost x-forwarded-for entry', policies: allow('  rules:\n  - from:\n    - source:\n        remoteIpBlocks: ["10.0.0.0/8"]'), traffic: http({ headers: { 'x-forwarded-for': '1.1.1.1, 10.1.2.3' } }, { sourceIp: '192.168.0.1' }), outcome: 'allowed' },
  { name: '59: AUDIT never rejects', policies: policyYaml('audit', '  action: AUDIT\n  rules:\n  - {}'), traffic: http({}), outcome: 'allowed' },
  { name: 'connection.sni on TCP with app TLS', policies: allow('  rules:\n  - when:\n    - key: connection.sni\n      values: ["*.svc"]'), traffic: { port: 9000, transport: 'tls', sni: 'db.svc' }, outcome: 'allowed' },
  { name: 'destination.ip', policies: allow('  rules:\n  - when:\n    - key: destination.ip\n      values: ["10.0.0.0/24"]'), traffic: http({}, { destinationIp: '10.0.0.9' }), outcome: 'allowed' },
  { name: 'trustDomains limits the peer trust domain', policies: allow('  rules:\n  - from:\n    - source:\n        trustDomains: ["other.td"]'), traffic: http({}), outcome: 'denied' },
];

describe('spec §7 decisions', () => {
  for (const testCase of CASES) {
    it(testCase.name, () => {
      const result = simulate(compileYaml(testCase.policies), testCase.traffic);
      expect(result.outcome).toBe(testCase.outcome);
      if (testCase.policy !== undefined) expect(result.decision.policy).toBe(testCase.policy);
    });
  }

  it('59: AUDIT records access_log_hint and logged', () => {
    const result = simulate(compileYaml(policyYaml('audit', '  action: AUDIT\n  rules:\n  - {}')), http({}));
    expect(result.dynamicMetadata['envoy.common']).toEqual({ access_log_hint: true });
    expect(result.stats).toContain('http.inbound_0.0.0.0_8080;.rbac.logged');
  });
});

describe('CUSTOM (ext_authz)', () => {
  const providers: ExtensionProvider[] = [{ name: 'authz', envoyExtAuthzGrpc: { service: 'authz.foo.svc.cluster.local', port: 9000 } }];
  const custom = policyYaml('ext', '  action: CUSTOM\n  provider:\n    name: authz\n  rules:\n  - to:\n    - operation:\n        paths: ["/protected*"]');
  const compile = (): ReturnType<typeof compileYaml> => compileYaml(custom, HTTPBIN, { extensionProviders: providers }, { services: [{ hostname: 'authz.foo.svc.cluster.local', namespace: 'foo' }] });

  it('60: places the shadow RBAC then ext_authz, marked by the policy name', () => {
    expect(compile().httpFilters.map((f) => f.name)).toEqual(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz']);
    const result = simulate(compile(), http({ path: '/protected/x' }, { extAuthz: 'deny' }));
    expect(result.outcome).toBe('denied');
    expect(result.dynamicMetadata['envoy.filters.http.rbac']?.['istio_ext_authz_shadow_effective_policy_id']).toBe('istio-ext-authz-authz-ns[foo]-policy[ext]-rule[0]');
    expect(result.httpResponse?.responseCodeDetails).toBe('ext_authz_denied');
  });

  it('does not call the authorizer for requests no CUSTOM rule matches', () => {
    const result = simulate(compile(), http({ path: '/public' }, { extAuthz: 'deny' }));
    expect(result.outcome).toBe('allowed');
    expect(result.filters[1]?.extAuthz).toEqual({ enabled: false });
  });

  it('63: an unusable provider name turns CUSTOM rules into enforced denies', () => {
    const bad: ExtensionProvider[] = [{ name: 'MyAuthz', envoyExtAuthzGrpc: { service: 'authz.foo.svc.cluster.local', port: 9000 } }];
    const yaml = custom.replace('name: authz', 'name: MyAuthz');
    const config = compileYaml(yaml, HTTPBIN, { extensionProviders: bad }, { services: [{ hostname: 'authz.foo.svc.cluster.local', namespace: 'foo' }] });
    const result = simulate(config, http({ path: '/protected' }));
    expect(result.outcome).toBe('denied');
    expect(result.decision.policy).toBe('istio-ext-authz-MyAuthz-ns[foo]-policy[ext]-rule[0]-deny-due-to-bad-CUSTOM-action');
    expect(simulate(config, http({ path: '/public' })).outcome).toBe('allowed');
  });

  it('with PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS each provider gets its pair, enabled by its own mark', () => {
    const two: ExtensionProvider[] = [
      { name: 'foo', envoyExtAuthzGrpc: { service: 'authz.foo.svc.cluster.local', port: 9000 } },
      { name: 'foo-bar', envoyExtAuthzGrpc: { service: 'authz.foo.svc.cluster.local', port: 9001 } },
    ];
    const yaml =
      policyYaml('a', '  action: CUSTOM\n  provider:\n    name: foo\n  rules:\n  - to:\n    - operation:\n        paths: ["/a"]') +
      policyYaml('b', '  action: CUSTOM\n  provider:\n    name: foo-bar\n  rules:\n  - to:\n    - operation:\n        paths: ["/b"]');
    const config = compileYaml(yaml, HTTPBIN, { extensionProviders: two, enableMultipleCustomAuthzProviders: true }, { services: [{ hostname: 'authz.foo.svc.cluster.local', namespace: 'foo' }] });
    expect(config.httpFilters.map((f) => f.name)).toEqual(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.rbac', 'envoy.filters.http.ext_authz']);
    const toB = simulate(config, http({ path: '/b' }));
    expect(toB.filters.filter((f) => f.extAuthz !== undefined).map((f) => f.extAuthz?.enabled)).toEqual([false, true]);
    const toA = simulate(config, http({ path: '/a' }));
    expect(toA.filters.filter((f) => f.extAuthz !== undefined).map((f) => f.extAuthz?.enabled)).toEqual([true, false]);
  });
});
