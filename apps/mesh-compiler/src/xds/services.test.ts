import { encodeEnvoyMessage, MESSAGE_NAMES } from '@ward/mesh/envoy-api';
import { describe, expect, it } from 'vitest';
import { fqdnOf, outboundCluster, outboundEndpoints, outboundListeners, outboundRoute, parseClusterKey, splitListenerName } from './outbound';
import { PolicyStore } from './policy-source';
import { loadServices } from './services';

const SERVICES = `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: foo}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: grpc, port: 7070}, {name: admin, port: 7071}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: echo, namespace: foo}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{name: grpc, port: 50051}]
`;

const source = (text: string, sourceName = 's.yaml') => [{ sourceName, text }];

describe('loadServices', () => {
  it('reads Service and Endpoints documents, pairing endpoint ports with service ports by name', () => {
    const result = loadServices(source(SERVICES), 'default');
    expect(result.findings).toEqual([]);
    expect(result.services).toHaveLength(1);
    const echo = result.services[0];
    expect(echo).toMatchObject({ name: 'echo', namespace: 'foo', hostname: 'echo.foo.svc.cluster.local', address: '10.96.0.10', ports: [{ name: 'grpc', port: 7070 }, { name: 'admin', port: 7071 }] });
    expect(echo?.endpoints.get(7070)).toEqual([{ ip: '10.0.0.1', port: 50051 }, { ip: '10.0.0.2', port: 50051 }]);
    expect(echo?.endpoints.get(7071)).toEqual([]);
  });

  it('locates every error by file, line and field', () => {
    const bad = `${SERVICES}---
apiVersion: v1
kind: Service
metadata: {name: Bad_Name}
spec: {ports: [{port: 1}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: echo, namespace: foo}
subsets: [{addresses: [{ip: 10.0.0.300}], ports: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: two}
spec: {clusterIP: nope, ports: [{port: 1}]}
`;
    const result = loadServices(source(bad), 'default');
    expect(result.services).toEqual([]);
    expect(result.findings.map((f) => `${f.sourceName}:${f.line} ${f.code} ${f.path}: ${f.message}`)).toEqual([
      `s.yaml:15 SERVICE_INVALID metadata.name: Service metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, at most 63), found "Bad_Name"`,
      's.yaml:25 SERVICE_INVALID spec.clusterIP: spec.clusterIP must be an IPv4 or IPv6 address or "None", found "nope"',
      's.yaml:20 ENDPOINTS_INVALID metadata.name: Endpoints foo/echo are declared twice',
    ]);
    const badIp = loadServices(source(SERVICES.replace('ip: 10.0.0.2', 'ip: 10.0.0.300')), 'default');
    expect(badIp.findings.map((f) => `${f.line} ${f.path}: ${f.message}`)).toEqual(['8 subsets[0].addresses[1].ip: ip must be an IPv4 or IPv6 address, found "10.0.0.300"']);
  });

  it('refuses Endpoints of an undeclared Service and ports that name no service port', () => {
    const orphan = loadServices(source('apiVersion: v1\nkind: Endpoints\nmetadata: {name: x}\nsubsets: []\n'), 'default');
    expect(orphan.findings.map((f) => f.message)).toEqual(['no Service default/x is declared for these Endpoints']);
    const wrongPort = loadServices(source(SERVICES.replace('ports: [{name: grpc, port: 50051}]', 'ports: [{name: web, port: 50051}]')), 'default');
    expect(wrongPort.findings.map((f) => `${f.path}: ${f.message}`)).toEqual(['subsets[0].ports[0].name: no port named "web" in Service foo/echo (its ports: "grpc", "admin")']);
  });

  it('makes the policy store refuse the change and keep the last good services', () => {
    const store = new PolicyStore();
    expect(store.apply(source(SERVICES), []).accepted).toBe(true);
    const refused = store.apply(source(SERVICES.replace('port: 7070', 'port: 0')), []);
    expect(refused.accepted).toBe(false);
    if (!refused.accepted) expect(refused.report).toContain('s.yaml:1: error [SERVICE_INVALID] Service foo/echo: port must be an integer in 1..65535, found 0 (spec.ports[0].port)');
    expect(store.snapshot.services.map((s) => s.hostname)).toEqual(['echo.foo.svc.cluster.local']);
    // A file emptied while it declared services is a write in progress, not a removal.
    expect(store.apply(source(''), []).accepted).toBe(false);
  });
});

describe('outbound resources (grpcgen shapes)', () => {
  const services = loadServices(source(SERVICES), 'default').services;

  it('parses names as grpcgen does', () => {
    expect(parseClusterKey('outbound|7070||echo.foo.svc.cluster.local')).toEqual({ port: 7070, subset: '', host: 'echo.foo.svc.cluster.local' });
    expect(parseClusterKey('outbound|70700||x')).toBeUndefined();
    expect(parseClusterKey('inbound|7070||x')).toBeUndefined();
    expect(splitListenerName('echo:7070')).toEqual({ host: 'echo', port: 7070 });
    expect(splitListenerName('echo')).toEqual({ host: 'echo' });
    expect(splitListenerName('echo:x')).toBeUndefined();
    expect(['echo', 'echo.foo', 'echo.foo.svc', 'echo.bar', 'echo.foo.svc.cluster.local'].map((h) => fqdnOf(h, 'foo'))).toEqual([
      'echo.foo.svc.cluster.local',
      'echo.foo.svc.cluster.local',
      'echo.foo.svc.cluster.local',
      'echo.bar',
      'echo.foo.svc.cluster.local',
    ]);
  });

  it('builds an api_listener with RDS over ADS, a route to the cluster, an EDS cluster and the endpoints, all encodable', () => {
    const listeners = outboundListeners('echo:7070', 'foo', services);
    expect(listeners.map((l) => l.name)).toEqual(['echo:7070']);
    expect(listeners[0]?.json).toMatchObject({
      address: { socketAddress: { address: '10.96.0.10', portValue: 7070 } },
      apiListener: { apiListener: { httpFilters: [{ name: 'envoy.filters.http.fault' }, { name: 'envoy.filters.http.router' }], rds: { configSource: { ads: {} }, routeConfigName: 'outbound|7070||echo.foo.svc.cluster.local' } } },
    });
    expect(outboundListeners('echo', 'foo', services).map((l) => l.name)).toEqual(['echo:7070', 'echo:7071']);
    expect(outboundListeners('echo:7070', 'bar', services)).toEqual([]);
    const key = 'outbound|7070||echo.foo.svc.cluster.local';
    const route = outboundRoute(key, 'foo', services) as { virtualHosts: Array<{ domains: string[]; routes: unknown[] }> };
    expect(route.virtualHosts[0]?.domains).toEqual(expect.arrayContaining(['echo.foo.svc.cluster.local:7070', 'echo:7070', '10.96.0.10:7070']));
    expect((outboundRoute(key, 'bar', services) as typeof route).virtualHosts[0]?.domains).not.toContain('echo:7070');
    expect(route.virtualHosts[0]?.routes).toEqual([{ name: 'default', match: { prefix: '/' }, route: { cluster: key } }]);
    expect(outboundCluster(key, services)).toEqual({ name: key, type: 'EDS', edsClusterConfig: { serviceName: key, edsConfig: { ads: {} } } });
    expect(outboundCluster('outbound|7070|v1|echo.foo.svc.cluster.local', services)).toBeUndefined();
    expect(outboundEndpoints('outbound|7071||echo.foo.svc.cluster.local', services)).toEqual({ clusterName: 'outbound|7071||echo.foo.svc.cluster.local' });
    for (const [message, json] of [
      [MESSAGE_NAMES.listener, listeners[0]?.json],
      [MESSAGE_NAMES.routeConfiguration, route],
      [MESSAGE_NAMES.cluster, outboundCluster(key, services)],
      [MESSAGE_NAMES.clusterLoadAssignment, outboundEndpoints(key, services)],
    ] as const) {
      const encoded = encodeEnvoyMessage(message, json);
      expect({ message, ok: encoded.ok }).toEqual({ message, ok: true });
    }
  });
});
