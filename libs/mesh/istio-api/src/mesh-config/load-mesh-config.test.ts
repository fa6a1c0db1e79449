import { describe, expect, it } from 'vitest';
import { loadMeshConfig } from './load-mesh-config';

const load = (text: string) => loadMeshConfig(text, { sourceName: 'mesh.yaml' });
const brief = (text: string) => load(text).diagnostics.map((d) => ({ code: d.code, severity: d.severity, line: d.position?.line, path: d.path }));

describe('loadMeshConfig: the fields the translation reads', () => {
  it('decodes every supported field, with istiod defaults left absent', () => {
    const result = load(`rootNamespace: istio-config
trustDomain: td1
trustDomainAliases: [zz, cluster.local, zz]
caCertificates:
- pem: "-----BEGIN CERTIFICATE-----"
  trustDomains: [foreign.td]
proxyInboundListenPort: 15007
protocolDetectionTimeout: 100ms
meshMTLS: {minProtocolVersion: TLSV1_3, cipherSuites: [ECDHE-ECDSA-AES256-GCM-SHA384]}
extensionProviders:
- name: http-authz
  envoyExtAuthzHttp:
    service: foo/ext-authz.foo.svc.cluster.local
    port: "8000"
    timeout: 1m30s
    pathPrefix: /check
    failOpen: true
    statusOnError: "403"
    includeRequestHeadersInCheck: [x-a, "x-b-*"]
    includeAdditionalHeadersInCheck: {x-tenant: t1}
    includeRequestBodyInCheck: {maxRequestBytes: 4096, allowPartialMessage: true}
    headersToUpstreamOnAllow: [x-user]
- name: grpc-authz
  envoyExtAuthzGrpc: {service: ext-authz.foo.svc.cluster.local, port: 9000}
- name: otel
  opentelemetry: {service: otel.observability.svc.cluster.local, port: 4317}
`);
    expect(result.diagnostics).toEqual([]);
    expect(result.form).toBe('mesh-config');
    expect(result.meshConfig).toEqual({
      rootNamespace: 'istio-config',
      trustDomain: 'td1',
      trustDomainAliases: ['cluster.local', 'zz'],
      caCertificateTrustDomains: ['foreign.td'],
      proxyInboundListenPort: 15007,
      protocolDetectionTimeout: '0.100s',
      meshMtls: { minProtocolVersion: 'TLSV1_3', cipherSuites: ['ECDHE-ECDSA-AES256-GCM-SHA384'] },
      extensionProviders: [
        {
          name: 'http-authz',
          kind: 'envoyExtAuthzHttp',
          envoyExtAuthzHttp: {
            service: 'foo/ext-authz.foo.svc.cluster.local',
            port: 8000,
            timeout: '90s',
            pathPrefix: '/check',
            failOpen: true,
            statusOnError: '403',
            includeRequestHeadersInCheck: ['x-a', 'x-b-*'],
            includeAdditionalHeadersInCheck: { 'x-tenant': 't1' },
            includeRequestBodyInCheck: { maxRequestBytes: 4096, allowPartialMessage: true },
            headersToUpstreamOnAllow: ['x-user'],
          },
        },
        { name: 'grpc-authz', kind: 'envoyExtAuthzGrpc', envoyExtAuthzGrpc: { service: 'ext-authz.foo.svc.cluster.local', port: 9000 } },
        { name: 'otel', kind: 'opentelemetry' },
      ],
    });
  });

  it('accepts proto field names, null for unset, and the fields ward does not read', () => {
    const result = load('trust_domain: td\nroot_namespace: ~\nmesh_mTLS: {min_protocol_version: 1}\naccessLogFile: /dev/stdout\ndefaultConfig: {discoveryAddress: istiod:15012}\nenableAutoMtls: false\n');
    expect(result.diagnostics).toEqual([]);
    expect(result.meshConfig).toEqual({ trustDomain: 'td', meshMtls: { minProtocolVersion: 'TLSV1_2' } });
  });

  it('an empty file is the default mesh config', () => {
    expect(load('# nothing\n')).toEqual({ meshConfig: {}, form: 'mesh-config', diagnostics: [] });
  });
});

describe('loadMeshConfig: diagnostics with line and field path', () => {
  it('warns about unknown fields (istiod ignores them) and still returns the config', () => {
    const result = load('trustDomain: td\ntrustDomian: typo\nextensionProviders:\n- name: a\n  envoyExtAuthzGrpc: {service: a.b.svc, port: 1, retries: 3}\n');
    expect(brief('trustDomain: td\ntrustDomian: typo\nextensionProviders:\n- name: a\n  envoyExtAuthzGrpc: {service: a.b.svc, port: 1, retries: 3}\n')).toEqual([
      { code: 'MESH_CONFIG_UNKNOWN_FIELD', severity: 'warning', line: 2, path: 'trustDomian' },
      { code: 'MESH_CONFIG_UNKNOWN_FIELD', severity: 'warning', line: 5, path: 'extensionProviders[0].envoyExtAuthzGrpc.retries' },
    ]);
    expect(result.meshConfig?.trustDomain).toBe('td');
  });

  it('rejects values of the wrong type, as istiod rejects the whole file', () => {
    const text = 'trustDomain: 42\nextensionProviders:\n- name: a\n  envoyExtAuthzHttp:\n    service: a.b.svc\n    port: x\n    failOpen: "true"\n    timeout: 10\n';
    const result = load(text);
    expect(result.meshConfig).toBeUndefined();
    expect(brief(text)).toEqual([
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 1, path: 'trustDomain' },
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 6, path: 'extensionProviders[0].envoyExtAuthzHttp.port' },
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 7, path: 'extensionProviders[0].envoyExtAuthzHttp.failOpen' },
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 8, path: 'extensionProviders[0].envoyExtAuthzHttp.timeout' },
    ]);
    expect(result.diagnostics[0]?.message).toBe('trustDomain: expected a string, found number 42 (quote it: "42")');
  });

  it('rejects invalid trust domains, durations, enum values, ports out of range and two providers in one entry', () => {
    const text = [
      'trustDomain: Bad_Domain',
      'trustDomainAliases: [ok.td, ""]',
      'protocolDetectionTimeout: 1500us',
      'meshMTLS: {minProtocolVersion: TLSV1_1}',
      'extensionProviders:',
      '- name: a',
      '  envoyExtAuthzGrpc: {service: a.b.svc, port: 1}',
      '  zipkin: {service: z, port: 9411}',
      '- name: b',
      '  envoyExtAuthzGrpc: {service: b.c.svc, port: 4294967296, timeout: 5 seconds}',
    ].join('\n');
    expect(brief(text)).toEqual([
      { code: 'MESH_CONFIG_INVALID_VALUE', severity: 'error', line: 1, path: 'trustDomain' },
      { code: 'MESH_CONFIG_INVALID_VALUE', severity: 'error', line: 2, path: 'trustDomainAliases[1]' },
      { code: 'MESH_CONFIG_INVALID_VALUE', severity: 'error', line: 3, path: 'protocolDetectionTimeout' },
      { code: 'MESH_CONFIG_INVALID_VALUE', severity: 'error', line: 4, path: 'meshMTLS.minProtocolVersion' },
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 8, path: 'extensionProviders[0].zipkin' },
      { code: 'MESH_CONFIG_WRONG_TYPE', severity: 'error', line: 10, path: 'extensionProviders[1].envoyExtAuthzGrpc.port' },
      { code: 'MESH_CONFIG_INVALID_VALUE', severity: 'error', line: 10, path: 'extensionProviders[1].envoyExtAuthzGrpc.timeout' },
    ]);
    const messages = load(text).diagnostics.map((d) => d.message);
    expect(messages).toContain('trustDomain: trust domain name "Bad_Domain" invalid');
    expect(messages).toContain('trustDomainAliases[1], domain `` : empty domain name not allowed');
    expect(messages).toContain('invalid protocol detection timeout: only durations to ms precision are supported');
    expect(messages).toContain('extensionProviders[1].envoyExtAuthzGrpc.timeout: bad Duration: time: invalid duration "5 seconds"');
  });

  it('warns about unusable extension providers (istiod logs them; CUSTOM policies using them fail closed)', () => {
    const text = [
      'extensionProviders:',
      '- name: ""',
      '  envoyExtAuthzGrpc: {service: a.b.svc, port: 1}',
      '- name: dup',
      '  envoyExtAuthzHttp: {service: "", port: 0, pathPrefix: check, statusOnError: "999"}',
      '- name: dup',
      '  envoyExtAuthzGrpc: {service: "foo/short", port: 9000}',
      '- name: nothing',
    ].join('\n');
    const result = load(text);
    expect(result.meshConfig?.extensionProviders).toHaveLength(4);
    expect(result.diagnostics.map((d) => [d.severity, d.code, d.position?.line, d.path, d.message])).toEqual([
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 2, 'extensionProviders[0].name', 'invalid extension provider : empty extension provider name'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 5, 'extensionProviders[1].envoyExtAuthzHttp.service', 'invalid extension provider dup: service must not be empty'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 5, 'extensionProviders[1].envoyExtAuthzHttp.port', 'invalid extension provider dup: port number 0 must be in the range 1..65535'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 5, 'extensionProviders[1].envoyExtAuthzHttp.pathPrefix', 'invalid extension provider dup: pathPrefix should begin with `/` but found "check"'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 5, 'extensionProviders[1].envoyExtAuthzHttp.statusOnError', 'invalid extension provider dup: unsupported statusOnError value 999'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 6, 'extensionProviders[2].name', 'invalid extension provider dup: duplicate extension provider name dup'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 7, 'extensionProviders[2].envoyExtAuthzGrpc.service', 'invalid extension provider dup: short names (non FQDN) are not allowed'],
      ['warning', 'MESH_CONFIG_INVALID_PROVIDER', 8, 'extensionProviders[3]', 'invalid extension provider nothing: unsupported provider: <nil>'],
    ]);
  });
});

describe('loadMeshConfig: file forms', () => {
  it('reads the istio ConfigMap, mapping lines inside data.mesh back to the file', () => {
    const text = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: istio, namespace: istio-system}', 'data:', '  mesh: |-', '    trustDomain: td1', '    extensionProviders:', '    - name: a', '      envoyExtAuthzGrpc: {service: a.b.svc, port: x}'].join('\n');
    const result = load(text);
    expect(result.form).toBe('config-map');
    expect(result.diagnostics.map((d) => [d.code, d.position, d.path])).toEqual([['MESH_CONFIG_WRONG_TYPE', { line: 9, column: 51 }, 'extensionProviders[0].envoyExtAuthzGrpc.port']]);
    expect(load(text.replace('port: x', 'port: 9')).meshConfig).toMatchObject({ trustDomain: 'td1', extensionProviders: [{ name: 'a' }] });
  });

  it('reads an IstioOperator spec.meshConfig, with paths under it', () => {
    const text = 'apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  meshConfig:\n    trustDomain: td1\n    bogus: 1\n';
    const result = load(text);
    expect(result.form).toBe('istio-operator');
    expect(result.meshConfig).toEqual({ trustDomain: 'td1' });
    expect(brief(text)).toEqual([{ code: 'MESH_CONFIG_UNKNOWN_FIELD', severity: 'warning', line: 6, path: 'spec.meshConfig.bogus' }]);
  });

  it.each([
    ['an AuthorizationPolicy', 'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: p}\n', 'MESH_CONFIG_NOT_A_MESH_CONFIG', 1],
    ['a list', '- a\n- b\n', 'MESH_CONFIG_NOT_A_MESH_CONFIG', 1],
    ['two documents', 'trustDomain: a\n---\ntrustDomain: b\n', 'MESH_CONFIG_NOT_A_MESH_CONFIG', 3],
    ['a ConfigMap without data.mesh', 'apiVersion: v1\nkind: ConfigMap\ndata: {meshNetworks: x}\n', 'MESH_CONFIG_NOT_A_MESH_CONFIG', 3],
    ['an IstioOperator without meshConfig', 'apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec: {profile: demo}\n', 'MESH_CONFIG_NOT_A_MESH_CONFIG', 3],
    ['invalid YAML', 'trustDomain: [a\n', 'MESH_YAML_SYNTAX', 2],
    ['a document nested too deeply', `a: ${'['.repeat(100)}${']'.repeat(100)}\n`, 'MESH_NESTING_TOO_DEEP', 1],
  ])('refuses %s', (_name, text, code, line) => {
    const result = load(text);
    expect(result.meshConfig).toBeUndefined();
    expect(result.diagnostics.map((d) => [d.code, d.severity, d.position?.line])).toEqual([[code, 'error', line]]);
  });

  it('refuses an input over the size limit without parsing it', () => {
    const result = loadMeshConfig(`trustDomain: ${'a'.repeat(2_000)}\n`, { sourceName: 'big.yaml', limits: { maxSourceBytes: 1_000 } });
    expect(result.diagnostics.map((d) => d.code)).toEqual(['MESH_INPUT_TOO_LARGE']);
  });
});
