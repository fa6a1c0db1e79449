import { describe, expect, it } from 'vitest';
import { WEBHOOK_CODES, loadResources, validateResources } from '../index';
import type { Diagnostic } from '../index';

function validate(text: string, advice = false): Diagnostic[] {
  const loaded = loadResources(text, { sourceName: 'p.yaml' });
  expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return validateResources(loaded.resources, { advice });
}

const ap = (spec: string, meta = '') => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: p
  namespace: foo${meta}
spec:
${spec}
`;

const pa = (spec: string, meta = '') => `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata:
  name: pa
  namespace: foo${meta}
spec:
${spec}
`;

/** [code, input, istioctl text, field path, line] — one case per message istiod can emit. */
type Case = [string, string, string, string, number];

const DENY_HTTP_ONLY =
  'configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port';
const P = 'invalid policy p.foo: ';
const rule = (body: string) => `  rules:\n  - ${body}`;

const ERRORS: Case[] = [
  ['SELECTOR_AND_TARGET_REFS', ap('  selector: {matchLabels: {a: b}}\n  targetRefs: [{kind: Service, name: s}]'), `${P}only one of targetRefs or workloadSelector can be set`, 'spec', 7],
  ['SELECTOR_EMPTY_KEY', ap('  selector: {matchLabels: {"": b}}'), `${P}empty key is not supported in selector: "=b"`, 'spec.selector.matchLabels[]', 7],
  ['SELECTOR_WILDCARD', ap('  selector: {matchLabels: {app: "web-*"}}'), `${P}wildcard is not supported in selector: "app=web-*"`, 'spec.selector.matchLabels[app]', 7],
  ['TARGET_REF_NAME_MISSING', ap('  targetRef: {kind: Service}'), `${P}targetRef name must be set`, 'spec.targetRef.name', 7],
  ['TARGET_REF_NAMESPACE_SET', ap('  targetRefs: [{kind: Service, name: s, namespace: bar}]'), `${P}targetRef namespace must not be set; cross namespace referencing is not supported`, 'spec.targetRefs[0].namespace', 7],
  [
    'TARGET_REF_KIND_NOT_ALLOWED',
    ap('  targetRef: {group: apps, kind: Deployment, name: d}'),
    `${P}targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was apps/Deployment`,
    'spec.targetRef.kind',
    7,
  ],
  [
    'AP_CUSTOM_WITHOUT_RULES',
    ap('  action: CUSTOM\n  provider: {name: ext}'),
    `${P}CUSTOM action without \`rules\` is meaningless as it will never be triggered, add an empty rule \`{}\` if you want it be triggered for every request`,
    'spec',
    7,
  ],
  ['AP_CUSTOM_PROVIDER_NAME_EMPTY', ap('  action: CUSTOM\n  rules: [{}]'), `${P}\`provider.name\` must not be empty`, 'spec.provider', 7],
  ['AP_CUSTOM_UNSUPPORTED_ATTRIBUTE', ap(`  action: CUSTOM\n  provider: {name: ext}\n${rule('from: [{source: {notNamespaces: [a]}}]')}`), `${P}From.NotNamespaces is currently not supported with CUSTOM action`, 'spec.rules[0].from[0].source.notNamespaces', 10],
  ['AP_PROVIDER_WITHOUT_CUSTOM', ap('  action: DENY\n  provider: {name: ext}\n  rules: [{}]'), `${P}\`provider\` must not be with non CUSTOM action, found DENY`, 'spec.provider', 8],
  [
    'AP_DENY_WITHOUT_RULES',
    ap('  action: DENY'),
    `${P}DENY action without \`rules\` is meaningless as it will never be triggered, add an empty rule \`{}\` if you want it be triggered for every request`,
    'spec',
    7,
  ],
  ['AP_FROM_SOURCE_NIL', ap(rule('from: [{}]')), `${P}\`from.source\` must not be nil, found at rule 0`, 'spec.rules[0].from[0]', 8],
  [
    'AP_SERVICE_ACCOUNTS_WITH_NAMESPACES_OR_PRINCIPALS',
    ap(rule('from: [{source: {serviceAccounts: [ns/sa], principals: [x]}}]')),
    `${P}cannot set serviceAccounts with namespaces or principals, found at rule 0`,
    'spec.rules[0].from[0].source.serviceAccounts',
    8,
  ],
  ['AP_FROM_SOURCE_EMPTY', ap(rule('from:\n    - source: {}')), `${P}\`from.source\` must not be empty, found at rule 0`, 'spec.rules[0].from[0].source', 9],
  ['AP_TO_OPERATION_NIL', ap(rule('to: [{}]')), `${P}\`to.operation\` must not be nil, found at rule 0`, 'spec.rules[0].to[0]', 8],
  ['AP_TO_OPERATION_EMPTY', ap(rule('to: [{operation: {}}]')), `${P}\`to.operation\` must not be empty, found at rule 0`, 'spec.rules[0].to[0].operation', 8],
  [
    'AP_BAD_CIDR',
    ap(rule('from:\n    - source:\n        ipBlocks: ["1.2.3.4/8", "10.0.0.0/33"]')),
    `${P}bad CIDR range (10.0.0.0/33): netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`,
    'spec.rules[0].from[0].source.ipBlocks[1]',
    10,
  ],
  ['AP_BAD_IP', ap(rule('from: [{source: {remoteIpBlocks: ["1.2.3"]}}]')), `${P}bad IP address (1.2.3)`, 'spec.rules[0].from[0].source.remoteIpBlocks[0]', 8],
  ['AP_BAD_PORT', ap(rule('to: [{operation: {ports: ["http"]}}]')), `${P}bad port (http): strconv.ParseUint: parsing "http": invalid syntax`, 'spec.rules[0].to[0].operation.ports[0]', 8],
  ['AP_EMPTY_VALUE', ap(rule('from: [{source: {principals: [a, ""]}}]')), `${P}empty value not allowed, found in Principals`, 'spec.rules[0].from[0].source.principals[1]', 8],
  [
    'AP_TOO_MANY_SERVICE_ACCOUNTS',
    ap(rule(`from: [{source: {serviceAccounts: [${Array.from({ length: 17 }, (_, i) => `sa${i}`).join(', ')}]}}]`)),
    `${P}may not have more than 16 values`,
    'spec.rules[0].from[0].source.serviceAccounts',
    8,
  ],
  ['AP_SERVICE_ACCOUNT_WILDCARD', ap(rule('from: [{source: {notServiceAccounts: ["ns/*"]}}]')), `${P}wildcard not allowed, found in NotServiceAccounts`, 'spec.rules[0].from[0].source.notServiceAccounts[0]', 8],
  [
    'AP_SERVICE_ACCOUNT_FORMAT',
    ap(rule('from: [{source: {serviceAccounts: ["a/b/c"]}}]')),
    `${P}expected format 'serviceAccount' or 'namespace/serviceAccount', found "a/b/c" in ServiceAccounts`,
    'spec.rules[0].from[0].source.serviceAccounts[0]',
    8,
  ],
  [
    'AP_SERVICE_ACCOUNT_EMPTY_NAMESPACE',
    ap(rule('from: [{source: {serviceAccounts: ["/sa"]}}]')),
    `${P}expected format 'serviceAccount' or 'namespace/serviceAccount', found empty namespace "/sa" in ServiceAccounts`,
    'spec.rules[0].from[0].source.serviceAccounts[0]',
    8,
  ],
  [
    'AP_SERVICE_ACCOUNT_EMPTY_NAME',
    ap(rule('from: [{source: {serviceAccounts: ["ns/"]}}]')),
    `${P}expected format 'serviceAccount' or 'namespace/serviceAccount', found empty serviceAccount "ns/" in ServiceAccounts`,
    'spec.rules[0].from[0].source.serviceAccounts[0]',
    8,
  ],
  [
    'AP_SERVICE_ACCOUNT_TOO_LONG',
    ap(rule(`from: [{source: {serviceAccounts: ["ns/${'s'.repeat(320)}"]}}]`)),
    `${P}value cannot exceed 320 characters, found "ns/${'s'.repeat(320)}" in ServiceAccounts`,
    'spec.rules[0].from[0].source.serviceAccounts[0]',
    8,
  ],
  ['AP_MULTIPLE_WILDCARDS', ap(rule('from: [{source: {trustDomains: ["*a*"]}}]')), `${P}at most one wildcard is allowed, found in TrustDomains: "*a*"`, 'spec.rules[0].from[0].source.trustDomains[0]', 8],
  ['AP_WILDCARD_IN_MIDDLE', ap(rule('from: [{source: {notTrustDomains: ["a*b"]}}]')), `${P}wildcard is only allowed at the start or end, found in NotTrustDomains: "a*b"`, 'spec.rules[0].from[0].source.notTrustDomains[0]', 8],
  ['AP_TRUST_DOMAIN_SLASH', ap(rule('from: [{source: {trustDomains: ["td/ns"]}}]')), `${P}trust domain must not contain '/', found in TrustDomains: "td/ns"`, 'spec.rules[0].from[0].source.trustDomains[0]', 8],
  [
    'AP_PATH_TEMPLATE_ANY_NOT_LAST',
    ap(rule('to: [{operation: {paths: ["/{**}/a/{*}"]}}]')),
    `${P}invalid or unsupported path {**}/a/{*}, found in Paths. {**} is not the last operator`,
    'spec.rules[0].to[0].operation.paths[0]',
    8,
  ],
  [
    'AP_PATH_TEMPLATE_BRACES',
    ap(rule('to: [{operation: {notPaths: ["/a/{id}"]}}]')),
    `${P}invalid or unsupported path a/{id}, found in NotPaths. Contains '{' or '}' beyond a supported path template`,
    'spec.rules[0].to[0].operation.notPaths[0]',
    8,
  ],
  [
    'AP_PATH_TEMPLATE_LITERAL',
    ap(rule('to: [{operation: {paths: ["/a/{*}/b*"]}}]')),
    `${P}invalid or unsupported path a/{*}/b*, found in Paths. Contains segment b* with invalid string literal`,
    'spec.rules[0].to[0].operation.paths[0]',
    8,
  ],
  ['AP_CONDITION_KEY_EMPTY', ap(rule('when: [{values: [a]}]')), `${P}\`key\` must not be empty`, 'spec.rules[0].when[0].key', 8],
  ['AP_CONDITION_NO_VALUES', ap(rule('when: [{key: source.ip}]')), `${P}at least one of \`values\` or \`notValues\` must be set for key source.ip`, 'spec.rules[0].when[0]', 8],
  ['AP_CONDITION_BAD_KEY', ap(rule('when: [{key: request.headers, values: [a]}]')), `${P}invalid \`value\` for \`key\` request.headers: bad key (request.headers): should have format a[b]`, 'spec.rules[0].when[0].key', 8],
  [
    'AP_CONDITION_ATTRIBUTE_REPLACED',
    ap(rule('when: [{key: "destination.labels[app]", notValues: [a]}]')),
    `${P}invalid \`value\` for \`key\` destination.labels[app]: attribute destination.labels[app] is replaced by the workload selector`,
    'spec.rules[0].when[0].key',
    8,
  ],
  [
    'AP_CONDITION_ATTRIBUTE_DEPRECATED',
    ap(rule('when: [{key: destination.user, values: [a]}]')),
    `${P}invalid \`value\` for \`key\` destination.user: deprecated attribute destination.user: only supported in v1alpha1`,
    'spec.rules[0].when[0].key',
    8,
  ],
  ['AP_CONDITION_UNKNOWN_ATTRIBUTE', ap(rule('when: [{key: request.method, values: [GET]}]')), `${P}invalid \`value\` for \`key\` request.method: unknown attribute: request.method`, 'spec.rules[0].when[0].key', 8],
  ['META_DRY_RUN_UNSUPPORTED_KIND', pa('  mtls: {mode: STRICT}', '\n  annotations: {"istio.io/dry-run": "true"}'), 'foo/pa has unsupported annotation istio.io/dry-run, please remove the annotation', 'metadata.annotations[istio.io/dry-run]', 6],
  [
    'META_DRY_RUN_INVALID_VALUE',
    ap('  rules: [{}]', '\n  annotations: {"istio.io/dry-run": "yes"}'),
    'foo/p has annotation istio.io/dry-run with invalid value (yes): strconv.ParseBool: parsing "yes": invalid syntax',
    'metadata.annotations[istio.io/dry-run]',
    6,
  ],
  [
    'META_DRY_RUN_UNSUPPORTED_ACTION',
    ap('  action: AUDIT\n  rules: [{}]', '\n  annotations: {"istio.io/dry-run": "true"}'),
    'the annotation istio.io/dry-run currently only supports action ALLOW/DENY, found action AUDIT in foo/p',
    'metadata.annotations[istio.io/dry-run]',
    6,
  ],
  ['META_ALWAYS_REJECT', ap('  {}', '\n  annotations: {"internal.istio.io/webhook-always-reject": ""}'), '"internal.istio.io/webhook-always-reject" annotation found, rejecting', 'metadata.annotations[internal.istio.io/webhook-always-reject]', 6],
  ['META_INTERNAL_ANNOTATION', ap('  {}', '\n  annotations: {"internal.istio.io/parents": "x"}'), '"internal.istio.io/parents" annotation found, this may not be set by users', 'metadata.annotations[internal.istio.io/parents]', 6],
  ['PA_PORT_LEVEL_WITHOUT_SELECTOR', pa('  portLevelMtls: {"8080": {mode: DISABLE}}'), 'mesh/namespace peer authentication cannot have port level mTLS', 'spec.portLevelMtls', 7],
  ['PA_PORT_LEVEL_EMPTY', pa('  selector: {matchLabels: {a: b}}\n  portLevelMtls: {}'), 'port level mTLS, if defined, must have at least one element', 'spec.portLevelMtls', 8],
  ['PA_PORT_OUT_OF_RANGE', pa('  selector: {matchLabels: {a: b}}\n  portLevelMtls:\n    "70000": {mode: STRICT}'), 'port must be in range 1..65535', 'spec.portLevelMtls[70000]', 9],
];

describe('istiod webhook errors (one case per message)', () => {
  it.each(ERRORS)('%s', (code, input, text, path, line) => {
    const diagnostics = validate(input);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    // Key errors are reported for `values` and again for `notValues` (even when empty), as istiod does.
    const twice = code.startsWith('AP_CONDITION_') && code !== 'AP_CONDITION_KEY_EMPTY' && code !== 'AP_CONDITION_NO_VALUES';
    expect(errors.map((d) => d.code)).toEqual(twice ? [code, code] : [code]);
    const [error] = errors;
    expect(error?.istioctlMessage ?? error?.message).toBe(text);
    expect(error?.path).toBe(path);
    expect(error?.position?.line).toBe(line);
    expect(error?.origin).toBe('webhook');
  });

  it('has a case for every webhook code (the two warnings are tested below)', () => {
    const covered = new Set<string>([...ERRORS.map(([code]) => code), 'SELECTOR_NO_LABELS', 'AP_DENY_HTTP_ONLY']);
    expect(WEBHOOK_CODES.filter((code) => !covered.has(code))).toEqual([]);
  });

  it('reports a bad key once for values and once for notValues', () => {
    const errors = validate(ap(rule('when: [{key: "destination.labels[app]", notValues: [a]}]')));
    expect(errors.map((d) => d.message)).toEqual([
      'invalid `value` for `key` destination.labels[app]: attribute destination.labels[app] is replaced by the workload selector',
      'invalid `notValue` for `key` destination.labels[app]: attribute destination.labels[app] is replaced by the workload selector',
    ]);
  });
});

describe('istiod webhook warnings', () => {
  it('warns about a selector without labels and still passes', () => {
    const diagnostics = validate(ap('  selector: {}'));
    expect(diagnostics.map((d) => [d.severity, d.code, d.message, d.path, d.position?.line])).toEqual([
      ['warning', 'SELECTOR_NO_LABELS', 'workload selector specified without labels', 'spec.selector', 7],
    ]);
    expect(diagnostics[0]?.istioctlMessage).toBeUndefined();
  });

  const denyCases: [string, string, boolean][] = [
    ['methods only', rule('to: [{operation: {methods: [GET]}}]'), true],
    ['methods and ports', rule('to: [{operation: {methods: [GET], ports: ["8080"]}}]'), false],
    ['when only, even HTTP-only', rule('when: [{key: "request.headers[x]", values: [a]}]'), false],
    ['requestPrincipals only in from', rule('from: [{source: {requestPrincipals: ["*"]}}]'), true],
    ['namespaces in from and methods in to', rule('from: [{source: {namespaces: [ns-1]}}]\n    to: [{operation: {methods: [GET]}}]'), true],
    ['namespaces in from only', rule('from: [{source: {namespaces: [ns-1]}}]'), false],
    ['trustDomains only in from', rule('from: [{source: {trustDomains: [td]}}]'), true],
  ];
  it.each(denyCases)('DENY HTTP-only warning: %s', (_name, rules, warns) => {
    const diagnostics = validate(ap(`  action: DENY\n${rules}`));
    const expected = warns ? [['warning', 'AP_DENY_HTTP_ONLY', DENY_HTTP_ONLY, 'spec.rules[0]']] : [];
    expect(diagnostics.map((d) => [d.severity, d.code, d.message, d.path])).toEqual(expected);
  });

  it('never warns for ALLOW rules with only HTTP attributes', () => {
    expect(validate(ap(rule('to: [{operation: {methods: [GET]}}]')))).toEqual([]);
  });
});

describe('istiod details', () => {
  it('prefixes AP errors with the default namespace when the document has none', () => {
    const input = ap('  action: DENY').replace('  namespace: foo\n', '');
    const [error] = validate(input);
    expect(error?.istioctlMessage?.startsWith('invalid policy p.default: DENY action')).toBe(true);
    expect(error?.resource).toEqual({ kind: 'AuthorizationPolicy', namespace: '', name: 'p' });
  });

  it('reports every bad IP of a list, and the empty IP twice as istiod does', () => {
    const codes = validate(ap(rule('from: [{source: {ipBlocks: ["x", "", "1.2.3.4"]}}]'))).map((d) => d.message);
    expect(codes).toEqual(['bad IP address (x)', 'bad IP address ()', 'empty value not allowed, found in IpBlocks']);
  });

  it('wraps multi-value attribute errors as Go multierror text', () => {
    const [error] = validate(ap(rule('when: [{key: destination.port, values: ["80", "x", "70000"]}]')));
    expect(error?.message).toBe(
      'invalid `value` for `key` destination.port: 2 errors occurred:\n\t* bad port (x): strconv.ParseUint: parsing "x": invalid syntax\n\t* bad port (70000): <nil>\n\n',
    );
    expect(error?.path).toBe('spec.rules[0].when[0].values[1]');
  });

  it('leaves keys unchecked where istiod does (source.namespace, connection.sni, claims values)', () => {
    const input = ap(rule(`when:
    - {key: source.namespace, values: ["a*b*c"]}
    - {key: connection.sni, values: ["*x*"]}
    - {key: "request.auth.claims[groups]", values: ["*"]}
    - {key: "experimental.envoy.filters.a.b[c]", values: ["[v]"]}`));
    expect(validate(input)).toEqual([]);
  });

  it('stops at an invalid dry-run annotation, as istiod does', () => {
    const diagnostics = validate(ap('  action: DENY', '\n  annotations: {"istio.io/dry-run": "maybe"}'));
    expect(diagnostics.map((d) => d.code)).toEqual(['META_DRY_RUN_INVALID_VALUE']);
  });

  it('accepts every Go boolean spelling of dry-run', () => {
    for (const value of ['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']) {
      expect(validate(ap('  rules: [{}]', `\n  annotations: {"istio.io/dry-run": "${value}"}`))).toEqual([]);
    }
  });
});

describe('CRD-only schema checks', () => {
  const cases: [string, string, string, string][] = [
    ['CRD_TOO_MANY_ITEMS', ap(`  rules: [${Array.from({ length: 513 }, () => '{}').join(', ')}]`), 'spec.rules: Too many: 513: must have at most 512 items', 'spec.rules'],
    ['CRD_TOO_LONG', ap(`  selector: {matchLabels: {app: "${'v'.repeat(64)}"}}`), 'spec.selector.matchLabels.app: Too long: may not be more than 63 bytes', 'spec.selector.matchLabels[app]'],
    ['CRD_PATTERN_MISMATCH', ap('  targetRef: {kind: "Ser vice", name: s}'), "spec.targetRef.kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'", 'spec.targetRef.kind'],
    ['CRD_REQUIRED', ap('  targetRefs: [{name: s}]'), 'spec.targetRefs[0].kind in body should be at least 1 chars long', 'spec.targetRefs[0].kind'],
  ];
  it.each(cases)('%s', (code, input, message, path) => {
    const crd = validate(input).filter((d) => d.origin === 'crd');
    expect(crd.map((d) => [d.code, d.message, d.path])).toEqual([[code, message, path]]);
  });

  it('checks the object name and namespace like the API server', () => {
    const crd = (text: string) => validate(text).filter((d) => d.origin === 'crd').map((d) => [d.code, d.path]);
    expect(crd(ap('  {}').replace('  name: p\n', ''))).toEqual([['CRD_REQUIRED', 'metadata']]);
    expect(crd(ap('  {}').replace('name: p', 'name: Deny_All'))).toEqual([['CRD_PATTERN_MISMATCH', 'metadata.name']]);
    expect(crd(ap('  {}').replace('namespace: foo', 'namespace: foo.bar'))).toEqual([['CRD_PATTERN_MISMATCH', 'metadata.namespace']]);
  });

  it('reports too many matchLabels', () => {
    const labels = Array.from({ length: 4097 }, (_, i) => `l${i}: v`).join(', ');
    const crd = validate(ap(`  selector: {matchLabels: {${labels}}}`)).filter((d) => d.origin === 'crd');
    expect(crd.map((d) => d.code)).toEqual(['CRD_TOO_MANY_PROPERTIES']);
  });
});

describe('advice (opt-in)', () => {
  it('flags spiffe:// in principals and an ALLOW policy without rules', () => {
    const input = `${ap(rule('from: [{source: {principals: ["spiffe://cluster.local/ns/a/sa/b"]}}]'))}---\n${ap('  {}').replace('name: p', 'name: q')}`;
    expect(validate(input)).toEqual([]);
    const advice = validate(input, true);
    expect(advice.map((d) => [d.code, d.path, d.resource?.name])).toEqual([
      ['ADVICE_SPIFFE_PREFIX', 'spec.rules[0].from[0].source.principals[0]', 'p'],
      ['ADVICE_ALLOW_NOTHING', 'spec', 'q'],
    ]);
  });
});
