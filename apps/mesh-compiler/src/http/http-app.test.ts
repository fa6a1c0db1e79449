import { Writable } from 'node:stream';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createMeshCompilerHttp } from './http-app';

const DENY_GET = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-get, namespace: foo}
spec:
  action: DENY
  rules: [{to: [{operation: {methods: [GET]}}]}]
`;

let app: FastifyInstance | undefined;

function build(bodyLimitBytes = 64 * 1024): FastifyInstance {
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  app = createMeshCompilerHttp({
    config: { bodyLimitBytes, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 1_000, maxInputsCount: 3 },
    logger: createLogger({ name: 'test', level: 'silent', destination: sink }),
    metrics: createMetrics({ prefix: 'test_', collectProcessMetrics: false }),
  });
  return app;
}

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('POST /validate', () => {
  it('answers a report with istioctl text and located diagnostics', async () => {
    const response = await build().inject({ method: 'POST', url: '/validate', payload: { inputs: [{ name: 'deny.yaml', content: DENY_GET }] } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ valid: true, exitCode: 0 });
    expect(body.text).toContain('"deny.yaml" has warnings: ');
    expect(body.inputs[0].diagnostics[0]).toMatchObject({ code: 'AP_DENY_HTTP_ONLY', path: 'spec.rules[0]', position: { line: 6 } });
  });

  it('answers valid: false with exitCode 1 for an invalid policy, and honours strict', async () => {
    const server = build();
    const invalid = await server.inject({ method: 'POST', url: '/validate', payload: { inputs: [{ content: 'a: [' }] } });
    expect(invalid.statusCode).toBe(200);
    expect(invalid.json()).toMatchObject({ valid: false, exitCode: 1 });
    const strict = await server.inject({ method: 'POST', url: '/validate', payload: { strict: true, inputs: [{ content: DENY_GET }] } });
    expect(strict.json()).toMatchObject({ valid: false, exitCode: 1 });
  });

  const malformed: [string, unknown][] = [
    ['no inputs', {}],
    ['empty inputs', { inputs: [] }],
    ['too many inputs', { inputs: [{ content: 'a' }, { content: 'b' }, { content: 'c' }, { content: 'd' }] }],
    ['unknown property', { inputs: [{ content: 'a' }], verbose: true }],
    ['content not a string', { inputs: [{ content: { a: 1 } }] }],
    ['unknown input property', { inputs: [{ content: 'a', kind: 'x' }] }],
    ['bad namespace', { inputs: [{ content: 'a' }], namespace: 'Not_A_Namespace' }],
  ];
  it.each(malformed)('rejects a malformed body (%s) with 400', async (_name, payload) => {
    const response = await build().inject({ method: 'POST', url: '/validate', payload: payload as Record<string, unknown> });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'FST_ERR_VALIDATION' });
  });

  it('rejects a body over the limit with 413 before parsing it', async () => {
    const response = await build(2048).inject({ method: 'POST', url: '/validate', payload: { inputs: [{ content: 'x'.repeat(4096) }] } });
    expect(response.statusCode).toBe(413);
  });

  it('rejects invalid JSON with 400 and a non-JSON body with 415', async () => {
    const server = build();
    const broken = await server.inject({ method: 'POST', url: '/validate', headers: { 'content-type': 'application/json' }, payload: '{"inputs": [' });
    expect(broken.statusCode).toBe(400);
    const yaml = await server.inject({ method: 'POST', url: '/validate', headers: { 'content-type': 'application/x-yaml' }, payload: DENY_GET });
    expect(yaml.statusCode).toBe(415);
  });

  it('counts requests on /metrics', async () => {
    const server = build();
    await server.inject({ method: 'POST', url: '/validate', payload: { inputs: [{ content: DENY_GET }] } });
    const metrics = await server.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('test_requests_total{route="validate",outcome="valid"} 1');
  });
});

describe('POST /compile', () => {
  const workload = { namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin' }, ports: [{ port: 8080, protocol: 'HTTP' }, { port: 9000, protocol: 'TCP' }] };

  it('answers the compiled configuration', async () => {
    const response = await build().inject({ method: 'POST', url: '/compile', payload: { inputs: [{ name: 'deny.yaml', content: DENY_GET }], workload } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ exitCode: 0, compiled: true, ok: true, listener: { name: 'virtualInbound' } });
    expect(body.httpFilters).toHaveLength(1);
  });

  it('adds istiod-format YAML on request', async () => {
    const response = await build().inject({ method: 'POST', url: '/compile', payload: { inputs: [{ content: DENY_GET }], workload, output: 'yaml' } });
    expect(response.json().yaml).toContain('name: envoy.filters.http.rbac\n');
  });

  it('does not compile an invalid policy and lists why', async () => {
    const response = await build().inject({ method: 'POST', url: '/compile', payload: { inputs: [{ content: DENY_GET.replace('[GET]', '[""]') }], workload } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ exitCode: 1, compiled: false });
    expect(body.diagnostics.filter((d: { severity: string }) => d.severity === 'error')).toMatchObject([{ code: 'AP_EMPTY_VALUE', line: 6, path: 'spec.rules[0].to[0].operation.methods[0]' }]);
  });

  const malformed: [string, unknown][] = [
    ['no workload', { inputs: [{ content: 'a' }] }],
    ['bad port', { inputs: [{ content: 'a' }], workload: { namespace: 'foo', ports: [{ port: 70000 }] } }],
    ['bad protocol', { inputs: [{ content: 'a' }], workload: { namespace: 'foo', ports: [{ port: 80, protocol: 'SCTP' }] } }],
    ['unknown workload property', { inputs: [{ content: 'a' }], workload: { namespace: 'foo', pods: 3 } }],
    ['trust domain with a slash', { inputs: [{ content: 'a' }], workload: { namespace: 'foo' }, mesh: { trustDomain: 'a/b' } }],
    ['expect on compile', { inputs: [{ content: 'a' }], workload: { namespace: 'foo' }, expect: 'allow' }],
  ];
  it.each(malformed)('rejects a malformed body (%s) with 400', async (_name, payload) => {
    const response = await build().inject({ method: 'POST', url: '/compile', payload: payload as Record<string, unknown> });
    expect(response.statusCode).toBe(400);
  });
});

describe('POST /explain', () => {
  const workload = { namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin' }, ports: [{ port: 8080, protocol: 'HTTP' }, { port: 9000, protocol: 'TCP' }] };
  const get = { method: 'GET', path: '/x', host: 'httpbin' };

  it('explains an HTTP request decision with the deciding policy', async () => {
    const response = await build().inject({
      method: 'POST',
      url: '/explain',
      payload: { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'mtls', http: get }, output: 'text' },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ exitCode: 0, explained: true, result: { outcome: 'denied', decision: { policy: 'ns[foo]-policy[deny-get]-rule[0]' } } });
    expect(body.text).toMatch(/^DENIED: GET \/x/);
  });

  it('explains a plaintext connection reset by STRICT', async () => {
    const strict = 'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: s, namespace: foo}\nspec: {mtls: {mode: STRICT}}\n';
    const response = await build().inject({ method: 'POST', url: '/explain', payload: { inputs: [{ content: strict }], workload, traffic: { port: 9000, transport: 'plaintext' } } });
    expect(response.json()).toMatchObject({ explained: true, result: { outcome: 'reset', stats: ['listener.0.0.0.0_15006.no_filter_chain_match'] } });
  });

  it('uses the meshConfig text for CUSTOM providers and checks an expected decision', async () => {
    const custom = 'apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: ext, namespace: foo}\nspec:\n  action: CUSTOM\n  provider: {name: authz}\n  rules: [{}]\n';
    const meshConfig = 'extensionProviders:\n- name: authz\n  envoyExtAuthzHttp: {service: authz.foo.svc.cluster.local, port: 8000}\n';
    const traffic = { port: 8080, transport: 'mtls', http: get, extAuthz: 'deny' };
    const server = build();
    const denied = await server.inject({ method: 'POST', url: '/explain', payload: { inputs: [{ content: custom }], meshConfig, workload, traffic, expect: 'deny' } });
    expect(denied.json()).toMatchObject({ exitCode: 0, result: { outcome: 'denied', httpResponse: { responseCodeDetails: 'ext_authz_denied' } }, expectation: { expected: 'deny', matched: true } });
    const wrong = await server.inject({ method: 'POST', url: '/explain', payload: { inputs: [{ content: custom }], meshConfig, workload, traffic, expect: 'allow' } });
    expect(wrong.json()).toMatchObject({ exitCode: 1, expectation: { expected: 'allow', actual: 'deny', matched: false } });
    const badMesh = await server.inject({ method: 'POST', url: '/explain', payload: { inputs: [{ content: custom }], meshConfig: 'trustDomain: [x]\n', workload, traffic } });
    expect(badMesh.json()).toMatchObject({ exitCode: 1, explained: false, diagnostics: [{ code: 'MESH_CONFIG_WRONG_TYPE', sourceName: 'meshConfig', line: 1, path: 'trustDomain' }] });
  });

  const malformed: [string, unknown][] = [
    ['no traffic', { inputs: [{ content: DENY_GET }], workload }],
    ['unknown expectation', { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'mtls' }, expect: 'maybe' }],
    ['meshConfig not a string', { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'mtls' }, meshConfig: { trustDomain: 'x' } }],
    ['bad transport', { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'ssl' } }],
    ['relative path', { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'mtls', http: { ...get, path: 'x' } } }],
    ['unknown traffic property', { inputs: [{ content: DENY_GET }], workload, traffic: { port: 8080, transport: 'mtls', spoof: true } }],
  ];
  it.each(malformed)('rejects a malformed body (%s) with 400', async (_name, payload) => {
    const response = await build().inject({ method: 'POST', url: '/explain', payload: payload as Record<string, unknown> });
    expect(response.statusCode).toBe(400);
  });
});
