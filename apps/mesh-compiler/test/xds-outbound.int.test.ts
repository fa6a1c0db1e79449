/**
 * End to end, client side: a proxyless gRPC client (`@grpc/grpc-js-xds`, target `xds:///...`)
 * resolves a service declared to the real `ward-mesh serve --xds` process (Service and Endpoints
 * documents in the policy directory) through LDS, RDS, CDS and EDS, and reaches an `XdsServer`
 * workload that enforces the policy ward-mesh serves it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as XdsModuleNamespace from '@grpc/grpc-js-xds';
import { freePort, serveEchoWorkload, startWardMesh, type WardMesh } from './support/ward-mesh-process';

const CLIENT_EXAMPLE = resolve(__dirname, '..', 'examples', 'proxyless-client.mjs');
const SERVICE = '/ward.test.Echo/';
const passthrough = (value: Buffer) => value;
const ECHO_SERVICE: grpc.ServiceDefinition = {
  Echo: { path: `${SERVICE}Echo`, requestStream: false, responseStream: false, requestSerialize: passthrough, requestDeserialize: passthrough, responseSerialize: passthrough, responseDeserialize: passthrough },
  Admin: { path: `${SERVICE}Admin`, requestStream: false, responseStream: false, requestSerialize: passthrough, requestDeserialize: passthrough, responseSerialize: passthrough, responseDeserialize: passthrough },
};


function bootstrapFor(xdsPort: number, id: string, namespace: string, extra: object = {}): object {
  return {
    xds_servers: [{ server_uri: `127.0.0.1:${xdsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id, metadata: { NAMESPACE: namespace, GENERATOR: 'grpc' }, locality: {} },
    ...extra,
  };
}

async function startWorkload(xds: typeof XdsModuleNamespace, xdsPort: number, name: string, namespace: string, labels: Record<string, string>, port: number): Promise<XdsModuleNamespace.XdsServer> {
  const bootstrap = bootstrapFor(xdsPort, `sidecar~127.0.0.1~${name}.${namespace}~${namespace}.svc.cluster.local`, namespace, {
    server_listener_resource_name_template: 'xds.istio.io/grpc/lds/inbound/%s',
  }) as { node: { metadata: Record<string, unknown> } };
  bootstrap.node.metadata['LABELS'] = labels;
  bootstrap.node.metadata['POD_PORTS'] = JSON.stringify([{ name: 'grpc', containerPort: port, protocol: 'TCP' }]);
  return serveEchoWorkload(xds, ECHO_SERVICE, bootstrap, name, port);
}

/** A client of `target` with its own bootstrap (in memory: one xDS client per bootstrap). */
function xdsClient(xdsPort: number, target: string, namespace = 'default'): grpc.Client {
  const bootstrap = bootstrapFor(xdsPort, `sidecar~127.0.0.9~web.${namespace}~${namespace}.svc.cluster.local`, namespace);
  return new grpc.Client(target, grpc.credentials.createInsecure(), { 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap) } as never);
}

type Outcome = `OK ${string}` | `${string}: ${string}`;

async function call(client: grpc.Client, method: 'Echo' | 'Admin', deadlineMs = 8_000): Promise<Outcome> {
  return new Promise((resolveCall) => {
    client.makeUnaryRequest(`${SERVICE}${method}`, passthrough, passthrough, Buffer.from('x'), new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (error, reply) => {
      if (!error) resolveCall(`OK ${reply?.toString() ?? ''}`);
      else resolveCall(`${grpc.status[error.code] ?? error.code}: ${error.details}`);
    });
  });
}

async function until(client: grpc.Client, method: 'Echo' | 'Admin', accept: (o: Outcome) => boolean, limitMs: number): Promise<Outcome[]> {
  const started = Date.now();
  const outcomes: Outcome[] = [];
  for (;;) {
    const outcome = await call(client, method);
    outcomes.push(outcome);
    if (accept(outcome) || Date.now() - started > limitMs) return outcomes;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const SERVICE_YAML = (endpoints: ReadonlyArray<number>) => `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  clusterIP: 10.96.0.10
  ports: [{name: grpc, port: 7070, targetPort: grpc}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: echo, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [${endpoints.map((p) => `{name: grpc, port: ${p}}`).join(', ')}]
`;

const DENY_ADMIN = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-admin, namespace: default}
spec:
  selector: {matchLabels: {app: echo}}
  action: DENY
  rules: [{to: [{operation: {paths: ["${SERVICE}Admin"]}}]}]
`;

describe('ward-mesh serve --xds for proxyless gRPC clients (xds:/// targets)', () => {
  let xds: typeof XdsModuleNamespace;
  let ward: WardMesh;
  let dir: string;
  const servers: XdsModuleNamespace.XdsServer[] = [];
  const clients: grpc.Client[] = [];
  let portA = 0;
  let portB = 0;

  beforeAll(async () => {
    process.env['GRPC_XDS_EXPERIMENTAL_RBAC'] = 'true';
    xds = await import('@grpc/grpc-js-xds');
    xds.register(); // the xds: resolver and the HTTP filters (router, fault, RBAC)
    dir = mkdtempSync(join(tmpdir(), 'ward-mesh-xds-out-'));
    [portA, portB] = [await freePort(), await freePort()];
    writeFileSync(join(dir, 'policy.yaml'), DENY_ADMIN);
    writeFileSync(join(dir, 'services.yaml'), SERVICE_YAML([portA]));
    ward = await startWardMesh(['--policies', dir]);
    servers.push(await startWorkload(xds, ward.xdsPort, 'echo-a', 'default', { app: 'echo' }, portA));
    servers.push(await startWorkload(xds, ward.xdsPort, 'echo-b', 'default', { app: 'echo' }, portB));
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const server of servers) server.forceShutdown();
    ward?.child.kill('SIGTERM');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('routes xds:///<fqdn>:<port> to the declared endpoint, where the served policy still applies', async () => {
    const client = xdsClient(ward.xdsPort, 'xds:///echo.default.svc.cluster.local:7070');
    clients.push(client);
    expect(await call(client, 'Echo')).toBe(`OK echo-a:${SERVICE}Echo`);
    expect(await call(client, 'Admin')).toMatch(/^PERMISSION_DENIED: /);
    const status = (await (await fetch(`http://127.0.0.1:${ward.httpPort}/xds/status`)).json()) as { nacks: unknown[]; nodes: Array<{ id: string; types: Record<string, { names: string[]; acked?: string; sent?: string }> }> };
    expect(status.nacks).toEqual([]);
    const web = status.nodes.find((n) => n.id.includes('~web.default~'));
    expect(Object.fromEntries(Object.entries(web?.types ?? {}).map(([t, s]) => [t.slice(t.lastIndexOf('.') + 1), { names: s.names, acked: s.acked === s.sent }]))).toEqual({
      Listener: { names: ['echo.default.svc.cluster.local:7070'], acked: true },
      RouteConfiguration: { names: ['outbound|7070||echo.default.svc.cluster.local'], acked: true },
      Cluster: { names: ['outbound|7070||echo.default.svc.cluster.local'], acked: true },
      ClusterLoadAssignment: { names: ['outbound|7070||echo.default.svc.cluster.local'], acked: true },
    });
  });

  it('resolves the short names a client of the same namespace may use', async () => {
    for (const target of ['xds:///echo:7070', 'xds:///echo.default:7070', 'xds:///echo.default.svc:7070']) {
      const client = xdsClient(ward.xdsPort, target);
      clients.push(client);
      expect({ target, outcome: await call(client, 'Echo') }).toEqual({ target, outcome: `OK echo-a:${SERVICE}Echo` });
    }
  });

  it('serves nothing for an undeclared service or port: the client never resolves it, ward-mesh carries on', async () => {
    // The response simply lacks the resource; grpc-js-xds 1.14.1 then keeps the call waiting for
    // name resolution until its deadline (no does-not-exist error reaches the channel).
    const targets = ['xds:///nope.default.svc.cluster.local:7070', 'xds:///echo.default.svc.cluster.local:7071'];
    const outcomes = await Promise.all(
      targets.map(async (target) => {
        const client = xdsClient(ward.xdsPort, target);
        clients.push(client);
        return { target, outcome: await call(client, 'Echo', 3_000) };
      }),
    );
    for (const outcome of outcomes) expect(outcome).toMatchObject({ target: outcome.target, outcome: expect.stringMatching(/^DEADLINE_EXCEEDED: .*waiting for name resolution/) });
    const client = xdsClient(ward.xdsPort, 'xds:///echo.default.svc.cluster.local:7070');
    clients.push(client);
    expect(await call(client, 'Echo')).toMatch(/^OK echo-/);
  });

  it('moves traffic when the Endpoints change, and refuses an invalid Service keeping the last good one', async () => {
    const client = xdsClient(ward.xdsPort, 'xds:///echo.default.svc.cluster.local:7070');
    clients.push(client);
    expect(await call(client, 'Echo')).toBe(`OK echo-a:${SERVICE}Echo`);
    writeFileSync(join(dir, 'services.yaml'), SERVICE_YAML([portB]));
    const moved = await until(client, 'Echo', (o) => o === `OK echo-b:${SERVICE}Echo`, 5_000);
    expect(moved.at(-1)).toBe(`OK echo-b:${SERVICE}Echo`);
    expect(moved.every((o) => o.startsWith('OK '))).toBe(true);
    expect(await call(client, 'Admin')).toMatch(/^PERMISSION_DENIED: /);

    const linesBefore = ward.lines.length;
    writeFileSync(join(dir, 'services.yaml'), SERVICE_YAML([portA]).replace('port: 7070', 'port: 70700').replace('ip: 127.0.0.1', 'ip: 127.0.0.300'));
    const deadline = Date.now() + 5_000;
    while (!ward.lines.slice(linesBefore).some((l) => l['msg'] === 'policy change refused; the last good configuration stays served') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const refused = ward.lines.slice(linesBefore).find((l) => l['msg'] === 'policy change refused; the last good configuration stays served');
    expect(String(refused?.['report'])).toContain('services.yaml:1: error [SERVICE_INVALID] Service default/echo: port must be an integer in 1..65535, found 70700 (spec.ports[0].port)');
    expect(await call(client, 'Echo')).toBe(`OK echo-b:${SERVICE}Echo`);
  });

  it('serves a client bootstrapped from GRPC_XDS_BOOTSTRAP in its own process (the example client)', async () => {
    const bootstrapFile = join(dir, '..', `${dir.slice(dir.lastIndexOf('/') + 1)}-bootstrap.json`);
    writeFileSync(bootstrapFile, JSON.stringify(bootstrapFor(ward.xdsPort, 'sidecar~127.0.0.8~cli.default~default.svc.cluster.local', 'default')));
    try {
      const run = (method: string) =>
        new Promise<{ code: number | null; out: string }>((resolveRun) => {
          const child = spawn(process.execPath, [CLIENT_EXAMPLE, 'xds:///echo.default.svc.cluster.local:7070', method, 'ward.test.Echo'], {
            env: { ...process.env, GRPC_XDS_BOOTSTRAP: bootstrapFile },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.once('exit', (code) => resolveRun({ code, out: out.trim() }));
        });
      expect(await run('Echo')).toEqual({ code: 0, out: `OK: echo-b:${SERVICE}Echo` });
      expect(await run('Admin')).toMatchObject({ code: 1, out: expect.stringMatching(/^PERMISSION_DENIED: /) });
    } finally {
      rmSync(bootstrapFile, { force: true });
    }
  });
});
