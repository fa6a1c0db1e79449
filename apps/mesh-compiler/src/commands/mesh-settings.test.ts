import { describe, expect, it } from 'vitest';
import { compileOptionsFromFlags, runCompile } from './compile-command';
import { runExplain, trafficFromFlags } from './explain-command';
import { assumedServices, meshSettingsOf, resolveMesh } from './mesh-settings';

const CUSTOM_ADMIN = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ext-admin, namespace: foo}
spec:
  selector: {matchLabels: {app: httpbin}}
  action: CUSTOM
  provider: {name: ext-authz-grpc}
  rules:
  - to:
    - operation: {paths: ["/admin*"]}
`;
const MESH = `rootNamespace: istio-config
trustDomain: td1
trustDomainAliases: [cluster.local]
accessLogFile: /dev/stdout
extensionProviders:
- name: ext-authz-grpc
  envoyExtAuthzGrpc:
    service: ext-authz.foo.svc.cluster.local
    port: 9000
    timeout: 250ms
    failOpen: true
- name: ext-authz-http
  envoyExtAuthzHttp:
    service: security/opa.example.com
    port: 8181
    pathPrefix: /v1/data
- name: zipkin
  zipkin: {service: zipkin.istio-system.svc.cluster.local, port: 9411}
`;

function options(flags: Record<string, string>, meshText: string | undefined, output: 'json' | 'text' = 'json') {
  const built = compileOptionsFromFlags({ namespace: 'foo', name: 'httpbin', labels: { app: 'httpbin' } }, { ports: '8080/HTTP,9000/TCP', ...flags }, output, 'default', meshText === undefined ? undefined : { sourceName: 'mesh.yaml', text: meshText });
  if (typeof built === 'string') throw new Error(built);
  return built;
}

describe('mesh settings from a MeshConfig', () => {
  it('maps the MeshConfig fields to the compiler settings, ext_authz providers only', () => {
    const resolved = resolveMesh({ sourceName: 'mesh.yaml', text: MESH }, {});
    expect(resolved.findings).toEqual([]);
    expect(resolved.mesh).toMatchObject({ rootNamespace: 'istio-config', trustDomain: 'td1', trustDomainAliases: ['cluster.local'] });
    expect(resolved.mesh.extensionProviders?.map((p) => p.name)).toEqual(['ext-authz-grpc', 'ext-authz-http']);
    expect(resolved.mesh.extensionProviders?.[0]?.envoyExtAuthzGrpc).toMatchObject({ timeout: '0.250s', failOpen: true });
    expect(meshSettingsOf({ meshMtls: { minProtocolVersion: 'TLSV1_3' }, proxyInboundListenPort: 15007 })).toEqual({ minTlsProtocolVersion: 'TLSV1_3', inboundListenPort: 15007 });
  });

  it('lets explicit flags override the file', () => {
    expect(resolveMesh({ sourceName: 'mesh.yaml', text: MESH }, { trustDomain: 'flag.td' }).mesh.trustDomain).toBe('flag.td');
  });

  it('assumes the registry entry each provider service names', () => {
    const providers = [
      { name: 'a', envoyExtAuthzGrpc: { service: 'ext.foo.svc.cluster.local', port: 1 } },
      { name: 'b', envoyExtAuthzHttp: { service: 'security/opa.example.com', port: 1 } },
      { name: 'c', envoyExtAuthzGrpc: { service: 'authz.example.com', port: 1 } },
      { name: 'd', envoyExtAuthzGrpc: { service: 'ext.foo.svc.cluster.local', port: 2 } },
    ];
    expect(assumedServices(providers)).toEqual([
      { namespace: 'foo', hostname: 'ext.foo.svc.cluster.local' },
      { namespace: 'security', hostname: 'opa.example.com' },
      { namespace: '', hostname: 'authz.example.com' },
    ]);
  });
});

describe('compile and explain with --mesh-config', () => {
  it('compiles a CUSTOM policy to the RBAC shadow filter and the ext_authz filter of its provider', () => {
    const result = runCompile([{ sourceName: 'custom.yaml', text: CUSTOM_ADMIN }], [], options({}, MESH));
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout) as { httpFilters: Array<{ name: string; typedConfig: Record<string, unknown> }> };
    expect(document.httpFilters.map((f) => f.name)).toEqual(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz']);
    expect(document.httpFilters[1]?.typedConfig).toMatchObject({
      grpcService: { envoyGrpc: { clusterName: 'outbound|9000||ext-authz.foo.svc.cluster.local', authority: 'ext-authz.foo.svc.cluster.local' }, timeout: '0.250s' },
      failureModeAllow: true,
    });
  });

  it('without the mesh config, the CUSTOM rules fail closed, exit 1 and say which flag is missing', () => {
    const result = runCompile([{ sourceName: 'custom.yaml', text: CUSTOM_ADMIN }], [], options({}, undefined));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('[COMPILE_CUSTOM_PROVIDER_INVALID]');
    expect(result.stderr).toContain('pass it with --mesh-config <file>');
  });

  it('an invalid mesh config is not used: nothing is compiled, the finding names file, line and field', () => {
    const bad = MESH.replace('port: 9000', 'port: nine');
    const result = runCompile([{ sourceName: 'custom.yaml', text: CUSTOM_ADMIN }], [], options({}, bad));
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('mesh.yaml:9: error [MESH_CONFIG_WRONG_TYPE] extensionProviders[0].envoyExtAuthzGrpc.port: expected an unsigned 32-bit integer, found string "nine" (extensionProviders[0].envoyExtAuthzGrpc.port)');
    expect(result.stderr).not.toContain('pass it with --mesh-config');
  });

  it('explain sends matching requests to the external authorizer and follows its answer', () => {
    const explain = (extAuthz: string) => {
      const built = options({ path: '/admin/users', 'ext-authz': extAuthz }, MESH, 'text');
      const traffic = trafficFromFlags({ path: '/admin/users', 'ext-authz': extAuthz }, built.workload);
      if (typeof traffic === 'string') throw new Error(traffic);
      return runExplain([{ sourceName: 'custom.yaml', text: CUSTOM_ADMIN }], [], { ...built, traffic });
    };
    const denied = explain('deny');
    expect(denied.stdout).toMatch(/^DENIED: /);
    expect(denied.stdout).toContain('envoy.filters.http.ext_authz ext_authz called: deny -> stopped here');
    expect(explain('allow').stdout).toMatch(/^ALLOWED: /);
  });
});
