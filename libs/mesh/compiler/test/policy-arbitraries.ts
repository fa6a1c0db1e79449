// fast-check generators of AuthorizationPolicies, PeerAuthentications and traffic for property
// tests and the cross-check corpus. Values come from pools mixing every wildcard form, odd
// characters and a few invalid values, so generated policies exercise every translation path.
import fc from 'fast-check';
import type { AuthorizationPolicy, AuthorizationPolicyAction, Condition, Operation, PeerAuthentication, Rule, Source } from '@ward/mesh/istio-api';
import type { SimulatedTraffic } from '../src/simulate/traffic';

const PRINCIPALS = ['cluster.local/ns/a/sa/b', 'cluster.local/ns/a/sa/*', '*/ns/b/sa/c', 'other.td/ns/a/sa/b', '*', 'cluster.local/ns/[x]/sa/y', '*b'];
const NAMESPACES = ['a', 'b', 'ns-*', '*-prod', '*', 'rule[0]-ns'];
const SERVICE_ACCOUNTS = ['b', 'a/b', 'b/c', 'sa.with.dots'];
const TRUST_DOMAINS = ['cluster.local', 'other.td', 'clus*', '*'];
const IPS = ['10.0.0.0/8', '10.0.0.2', '192.168.0.0/16', '2001:db8::/32', '::1', 'bad-ip', '10.0.0.0/33'];
const HOSTS = ['httpbin', 'httpbin.foo', '*.example.com', 'api.*', '*'];
const METHODS = ['GET', 'POST', 'get', '*', 'DEL*'];
const PATHS = ['/', '/api/*', '/admin*', '*/x', '*', '/exact', '/t/{*}', '/{**}/t', '/a/{*}/b'];
const PORTS = ['8080', '9000', '80', '65535', 'bad', '70000'];
const REQUEST_PRINCIPALS = ['iss/sub', 'https://example.com/*', '*', '*/alice', 'issuer', 'iss*'];
const WHEN_KEYS: Array<[string, readonly string[]]> = [
  ['request.headers[x-a]', ['a', 'b*', '*c', '*']],
  ['source.ip', IPS],
  ['remote.ip', IPS],
  ['destination.ip', ['10.0.0.0/24', '10.0.0.1']],
  ['destination.port', PORTS],
  ['source.namespace', NAMESPACES],
  ['source.principal', PRINCIPALS],
  ['source.serviceAccount', SERVICE_ACCOUNTS],
  ['source.trustDomain', TRUST_DOMAINS],
  ['connection.sni', ['db.svc', '*.svc', '*']],
  ['request.auth.principal', REQUEST_PRINCIPALS],
  ['request.auth.audiences', ['aud1', 'aud*']],
  ['request.auth.presenter', ['azp']],
  ['request.auth.claims[groups]', ['admin', 'dev']],
  ['request.auth.claims[a][b]', ['x']],
  ['experimental.envoy.filters.network.mysql_proxy[db.table]', ['[update]', 'x']],
  ['request.headers[]', ['a']],
  ['request.auth.claims[]', ['x']],
  ['experimental.envoy.filters.x[]', ['y']],
];

const list = (pool: readonly string[]): fc.Arbitrary<string[] | undefined> => fc.option(fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 3 });

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export const sourceArbitrary: fc.Arbitrary<Source> = fc
  .record({
    principals: list(PRINCIPALS),
    notPrincipals: list(PRINCIPALS),
    requestPrincipals: list(REQUEST_PRINCIPALS),
    notRequestPrincipals: list(REQUEST_PRINCIPALS),
    namespaces: list(NAMESPACES),
    notNamespaces: list(NAMESPACES),
    serviceAccounts: list(SERVICE_ACCOUNTS),
    trustDomains: list(TRUST_DOMAINS),
    notTrustDomains: list(TRUST_DOMAINS),
    ipBlocks: list(IPS),
    notIpBlocks: list(IPS),
    remoteIpBlocks: list(IPS),
  })
  .map(compact);

export const operationArbitrary: fc.Arbitrary<Operation> = fc
  .record({ hosts: list(HOSTS), notHosts: list(HOSTS), methods: list(METHODS), notMethods: list(METHODS), paths: list(PATHS), notPaths: list(PATHS), ports: list(PORTS), notPorts: list(PORTS) })
  .map(compact);

export const conditionArbitrary: fc.Arbitrary<Condition> = fc.constantFrom(...WHEN_KEYS).chain(([key, pool]) =>
  fc.record({ values: list(pool), notValues: list(pool) }).map((v) => compact({ key, ...v })),
);

export const ruleArbitrary: fc.Arbitrary<Rule> = fc
  .record({
    from: fc.option(fc.array(sourceArbitrary.map((source) => ({ source })), { minLength: 1, maxLength: 2 }), { nil: undefined }),
    to: fc.option(fc.array(operationArbitrary.map((operation) => ({ operation })), { minLength: 1, maxLength: 2 }), { nil: undefined }),
    when: fc.option(fc.array(conditionArbitrary, { minLength: 1, maxLength: 3 }), { nil: undefined }),
  })
  .map(compact);

/** An AuthorizationPolicy in namespace foo or the root namespace, selecting the test workload. */
export function authorizationPolicyArbitrary(actions: readonly AuthorizationPolicyAction[] = ['ALLOW', 'DENY', 'AUDIT']): fc.Arbitrary<AuthorizationPolicy> {
  return fc
    .record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/u),
      namespace: fc.constantFrom('foo', 'foo', 'istio-system'),
      action: fc.constantFrom(...actions),
      rules: fc.option(fc.array(ruleArbitrary, { minLength: 1, maxLength: 4 }), { nil: undefined, freq: 8 }),
      dryRun: fc.boolean(),
      selector: fc.constantFrom<Record<string, string> | undefined>(undefined, { app: 'httpbin' }, { version: 'v1' }),
    })
    .map(({ name, namespace, action, rules, dryRun, selector }) => ({
      apiVersion: 'security.istio.io/v1' as const,
      kind: 'AuthorizationPolicy' as const,
      metadata: { name, namespace, labels: {}, annotations: (dryRun ? { 'istio.io/dry-run': 'true' } : {}) as Record<string, string> },
      spec: compact({ action, rules, selector: selector === undefined ? undefined : { matchLabels: selector } }),
    }));
}

const MODES = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'] as const;

/** A PeerAuthentication at mesh, namespace or workload level. */
export const peerAuthenticationArbitrary: fc.Arbitrary<PeerAuthentication> = fc
  .record({
    level: fc.constantFrom('mesh', 'namespace', 'workload'),
    mode: fc.constantFrom(...MODES),
    ports: fc.option(fc.dictionary(fc.constantFrom('8080', '9000', '9999'), fc.constantFrom(...MODES).map((mode) => ({ mode })), { maxKeys: 2 }), { nil: undefined }),
    name: fc.stringMatching(/^[a-z]{1,8}$/u),
  })
  .map(({ level, mode, ports, name }) => ({
    apiVersion: 'security.istio.io/v1' as const,
    kind: 'PeerAuthentication' as const,
    metadata: { name, namespace: level === 'mesh' ? 'istio-system' : 'foo', labels: {}, annotations: {} },
    spec: compact({
      mtls: { mode },
      selector: level === 'workload' ? { matchLabels: { app: 'httpbin' } } : undefined,
      portLevelMtls: level === 'workload' ? ports : undefined,
    }),
  }));

const CALLERS = ['cluster.local/ns/a/sa/b', 'cluster.local/ns/b/sa/c', 'cluster.local/ns/ns-x/sa/b', 'other.td/ns/a/sa/b', 'cluster.local/ns/a-prod/sa/sa.with.dots'];

/** Traffic to the test workload: HTTP or TCP, mTLS or plaintext, from varied callers. */
export const trafficArbitrary: fc.Arbitrary<SimulatedTraffic> = fc
  .record({
    port: fc.constantFrom(8080, 9000, 7777),
    transport: fc.constantFrom('mtls', 'mtls', 'plaintext', 'tls') as fc.Arbitrary<'mtls' | 'plaintext' | 'tls'>,
    sourcePrincipal: fc.constantFrom(...CALLERS),
    sourceIp: fc.constantFrom('10.0.0.2', '192.168.3.4', '172.16.0.1'),
    remoteIp: fc.constantFrom(undefined, '10.9.9.9', '2001:db8::5'),
    sni: fc.constantFrom(undefined, 'db.svc', 'x.example.com'),
    http: fc.option(
      fc.record({
        method: fc.constantFrom('GET', 'POST', 'get', 'DELETE'),
        path: fc.constantFrom('/', '/api/v1', '/admin', '/administrator?x=1', '/t/a', '/t/a/b', '/x/t', '/exact', '/a/b/b'),
        host: fc.constantFrom('httpbin', 'httpbin.foo', 'a.example.com', 'API.example.com'),
        headers: fc.constantFrom<Record<string, string | string[]>>({}, { 'x-a': 'a' }, { 'x-a': 'bc' }, { 'X-A': ['b1', 'b2'] }),
        requestPrincipal: fc.constantFrom(undefined, 'iss/sub', 'https://example.com/alice'),
        jwtClaims: fc.constantFrom(undefined, { groups: ['admin'] }, { aud: 'aud1', azp: 'azp' }),
      }).map(compact),
      { nil: undefined },
    ),
  })
  .map(compact);
