/**
 * End to end: the real `ward-mesh serve --xds` process serves compiled policies over ADS to real
 * proxyless gRPC servers (`@grpc/grpc-js-xds` XdsServer, bootstrapped against it) and real gRPC
 * clients call them over loopback. Each outcome is also compared with what the sidecar simulator
 * (`ward-mesh explain`'s engine) predicts for the same request.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { compileWorkload, simulate } from '@ward/mesh/compiler';
import { loadResources, type AuthorizationPolicy, type PeerAuthentication } from '@ward/mesh/istio-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as XdsModuleNamespace from '@grpc/grpc-js-xds';
import { freePort, serveEchoWorkload, startWardMesh, type WardMesh } from './support/ward-mesh-process';

const SERVICE = '/ward.test.Echo/';

type XdsModule = typeof XdsModuleNamespace;


const passthrough = (value: Buffer) => value;
const ECHO_SERVICE: grpc.ServiceDefinition = {
  Echo: { path: `${SERVICE}Echo`, requestStream: false, responseStream: false, requestSerialize: passthrough, requestDeserialize: passthrough, responseSerialize: passthrough, responseDeserialize: passthrough },
  Admin: { path: `${SERVICE}Admin`, requestStream: false, responseStream: false, requestSerialize: passthrough, requestDeserialize: passthrough, responseSerialize: passthrough, responseDeserialize: passthrough },
};

interface Workload {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly port: number;
  readonly server: XdsModuleNamespace.XdsServer;
}

async function startWorkload(xds: XdsModule, xdsPort: number, name: string, namespace: string, labels: Record<string, string>, extraBootstrap: object = {}): Promise<Workload> {
  const port = await freePort();
  const bootstrap = {
    xds_servers: [{ server_uri: `127.0.0.1:${xdsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: {
      id: `sidecar~127.0.0.1~${name}.${namespace}~${namespace}.svc.cluster.local`,
      metadata: { NAMESPACE: namespace, LABELS: labels, GENERATOR: 'grpc', POD_PORTS: JSON.stringify([{ name: 'grpc', containerPort: port, protocol: 'TCP' }]) },
      locality: {},
    },
    server_listener_resource_name_template: 'xds.istio.io/grpc/lds/inbound/%s',
    ...extraBootstrap,
  };
  const server = await serveEchoWorkload(xds, ECHO_SERVICE, bootstrap, name, port);
  return { name, namespace, labels, port, server };
}

type CallOutcome = 'OK' | 'PERMISSION_DENIED' | `other:${string}`;

const clients = new Map<string, grpc.Client>();
function clientFor(port: number, identity: ClientIdentity | undefined): grpc.Client {
  const key = `${port}|${identity?.name ?? 'plaintext'}`;
  let client = clients.get(key);
  if (client === undefined) {
    const credentials = identity === undefined ? grpc.credentials.createInsecure() : grpc.credentials.createSsl(identity.ca, identity.key, identity.cert);
    client = new grpc.Client(`127.0.0.1:${port}`, credentials);
    clients.set(key, client);
  }
  return client;
}

/** A client certificate (PEM) and the CA it trusts for the server. */
interface ClientIdentity {
  readonly name: string;
  readonly ca: Buffer;
  readonly key: Buffer;
  readonly cert: Buffer;
}

async function call(port: number, method: 'Echo' | 'Admin', headers: Record<string, string> = {}, identity?: ClientIdentity): Promise<CallOutcome> {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
  return new Promise((resolveCall) => {
    clientFor(port, identity).makeUnaryRequest(`${SERVICE}${method}`, passthrough, passthrough, Buffer.from('x'), metadata, { deadline: Date.now() + 5_000 }, (error) => {
      if (!error) resolveCall('OK');
      else if (error.code === grpc.status.PERMISSION_DENIED) resolveCall('PERMISSION_DENIED');
      else resolveCall(`other:${grpc.status[error.code] ?? error.code} ${error.details}`);
    });
  });
}

type Predicted = CallOutcome | 'NO_CONNECTION';

/** What the sidecar simulator predicts for the same request on a gRPC port. */
function predicted(policyText: string, workload: Workload, method: 'Echo' | 'Admin', headers: Record<string, string> = {}, sourcePrincipal?: string, sourceIp?: string): Predicted {
  const loaded = loadResources(policyText, { sourceName: 'p.yaml' }).resources.map((r) => r.resource);
  const result = compileWorkload({
    workload: { namespace: workload.namespace, labels: workload.labels, ports: [{ port: workload.port, protocol: 'GRPC' }] },
    authorizationPolicies: loaded.filter((r): r is AuthorizationPolicy => r.kind === 'AuthorizationPolicy'),
    peerAuthentications: loaded.filter((r): r is PeerAuthentication => r.kind === 'PeerAuthentication'),
  });
  if (result.config === undefined) throw new Error(JSON.stringify(result.diagnostics));
  const outcome = simulate(result.config, {
    port: workload.port,
    transport: sourcePrincipal === undefined ? 'plaintext' : 'mtls',
    ...(sourcePrincipal === undefined ? {} : { sourcePrincipal }),
    ...(sourceIp === undefined ? {} : { sourceIp, destinationIp: '127.0.0.1' }),
    http: { method: 'POST', path: `${SERVICE}${method}`, host: `127.0.0.1:${workload.port}`, headers: { 'content-type': 'application/grpc', ...headers }, version: 'h2' },
  });
  if (outcome.outcome === 'allowed') return 'OK';
  if (outcome.outcome === 'denied') return 'PERMISSION_DENIED';
  return 'NO_CONNECTION';
}

/** Calls until the outcome is `expected` (the push reached the server) or `limitMs` passes. */
async function until(port: number, method: 'Echo' | 'Admin', expected: CallOutcome, limitMs: number, headers: Record<string, string> = {}): Promise<{ elapsedMs: number; outcomes: CallOutcome[] }> {
  const started = Date.now();
  const outcomes: CallOutcome[] = [];
  for (;;) {
    const outcome = await call(port, method, headers);
    outcomes.push(outcome);
    if (outcome === expected) return { elapsedMs: Date.now() - started, outcomes };
    if (Date.now() - started > limitMs) return { elapsedMs: Date.now() - started, outcomes };
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Status {
  version: string;
  nacks: Array<{ nodeId: string; version: string; message: string }>;
  counters: Record<string, number>;
  nodes: Array<{ id: string; types: Record<string, { sent?: string; acked?: string }> }>;
}

async function status(ward: WardMesh): Promise<Status> {
  const response = await fetch(`http://127.0.0.1:${ward.httpPort}/xds/status`);
  return (await response.json()) as never;
}

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

/**
 * Waits until `version` is served and every node whose id contains one of `names` ACKed what it was
 * last sent (a node whose resources did not change is not pushed to); the time taken.
 */
async function acked(ward: WardMesh, version: string, names: readonly string[], limitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const s = await status(ward);
    const nodes = s.nodes.filter((n) => names.some((name) => n.id.includes(name)));
    if (s.version === version && nodes.length === names.length && nodes.every((n) => n.types[LDS]?.sent !== undefined && n.types[LDS]?.acked === n.types[LDS]?.sent)) return Date.now() - started;
    if (Date.now() - started > limitMs) throw new Error(`version ${version} not ACKed by ${names.join(', ')} within ${limitMs} ms: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const policy = (name: string, namespace: string, body: string) => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
${body}`;

const CASES: ReadonlyArray<{ title: string; text: string; calls: ReadonlyArray<{ method: 'Echo' | 'Admin'; headers?: Record<string, string>; a: CallOutcome; b: CallOutcome }> }> = [
  { title: 'no policy: everything allowed', text: '# no policies\n', calls: [{ method: 'Echo', a: 'OK', b: 'OK' }, { method: 'Admin', a: 'OK', b: 'OK' }] },
  {
    title: 'DENY on a path, selected by label',
    text: policy('deny-admin', 'foo', `  selector:\n    matchLabels:\n      app: a\n  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Admin"]\n`),
    calls: [{ method: 'Echo', a: 'OK', b: 'OK' }, { method: 'Admin', a: 'PERMISSION_DENIED', b: 'OK' }],
  },
  {
    title: 'ALLOW on method and path prefix for the namespace',
    text: policy('allow-echo', 'foo', `  action: ALLOW\n  rules:\n  - to:\n    - operation:\n        methods: ["POST"]\n        paths: ["${SERVICE}Ech*"]\n`),
    calls: [{ method: 'Echo', a: 'OK', b: 'OK' }, { method: 'Admin', a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' }],
  },
  {
    title: 'ALLOW on a method gRPC never uses',
    text: policy('allow-get', 'foo', `  rules:\n  - to:\n    - operation:\n        methods: ["GET"]\n`),
    calls: [{ method: 'Echo', a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' }],
  },
  {
    title: 'ALLOW on a request header (when)',
    text: policy('allow-alice', 'foo', `  rules:\n  - when:\n    - key: request.headers[x-user]\n      values: ["alice"]\n`),
    calls: [
      { method: 'Echo', headers: { 'x-user': 'alice' }, a: 'OK', b: 'OK' },
      { method: 'Echo', headers: { 'x-user': 'bob' }, a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' },
      { method: 'Echo', a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' },
    ],
  },
  {
    title: 'DENY with notPaths in the root namespace applies to every workload',
    text: policy('deny-not-echo', 'istio-system', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        notPaths: ["${SERVICE}Echo"]\n`),
    calls: [{ method: 'Echo', a: 'OK', b: 'OK' }, { method: 'Admin', a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' }],
  },
  {
    title: 'a policy of another namespace does not apply',
    text: policy('deny-all-bar', 'bar', `  action: DENY\n  rules:\n  - {}\n`),
    calls: [{ method: 'Echo', a: 'OK', b: 'OK' }],
  },
  {
    title: 'ALLOW requiring a peer principal denies plaintext callers',
    text: policy('allow-sa', 'foo', `  rules:\n  - from:\n    - source:\n        principals: ["cluster.local/ns/foo/sa/client"]\n`),
    calls: [{ method: 'Echo', a: 'PERMISSION_DENIED', b: 'PERMISSION_DENIED' }],
  },
  {
    title: 'DENY and ALLOW together: DENY first',
    text: `${policy('allow-all', 'foo', `  rules:\n  - {}\n`)}---\n${policy('deny-echo-b', 'foo', `  selector:\n    matchLabels:\n      app: b\n  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Echo"]\n`)}`,
    calls: [{ method: 'Echo', a: 'OK', b: 'PERMISSION_DENIED' }, { method: 'Admin', a: 'OK', b: 'OK' }],
  },
];

describe('ward-mesh serve --xds with proxyless gRPC servers', () => {
  let xds: XdsModule;
  let ward: WardMesh;
  let dir: string;
  let a: Workload;
  let b: Workload;

  beforeAll(async () => {
    process.env['GRPC_XDS_EXPERIMENTAL_RBAC'] = 'true';
    xds = await import('@grpc/grpc-js-xds');
    // The HTTP filters (router, RBAC) are registered by register(), which XdsServer does not call.
    xds.register();
    dir = mkdtempSync(join(tmpdir(), 'ward-mesh-xds-'));
    writeFileSync(join(dir, 'policy.yaml'), '');
    ward = await startWardMesh(['--policies', dir]);
    a = await startWorkload(xds, ward.xdsPort, 'echo-a', 'foo', { app: 'a' });
    b = await startWorkload(xds, ward.xdsPort, 'echo-b', 'foo', { app: 'b' });
  });

  afterAll(async () => {
    for (const client of clients.values()) client.close();
    clients.clear();
    a?.server.forceShutdown();
    b?.server.forceShutdown();
    ward?.child.kill('SIGTERM');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('enforces each policy set on both workloads as the simulator predicts, each change within 1 s', async () => {
    let previous = '';
    for (const testCase of CASES) {
      const before = Number((await status(ward)).version);
      writeFileSync(join(dir, 'policy.yaml'), testCase.text);
      const expected = testCase.text === previous ? before : before + 1;
      previous = testCase.text;
      // The change reaches both servers (ACKed) within 1 s of the file write.
      expect(await acked(ward, String(expected), ['echo-a.', 'echo-b.'], 1_000)).toBeLessThan(1_000);
      for (const c of testCase.calls) {
        const [ra, rb] = [await call(a.port, c.method, c.headers), await call(b.port, c.method, c.headers)];
        expect({ title: testCase.title, method: c.method, headers: c.headers, a: ra, b: rb }).toEqual({ title: testCase.title, method: c.method, headers: c.headers, a: c.a, b: c.b });
        expect(ra).toBe(predicted(testCase.text, a, c.method, c.headers));
        expect(rb).toBe(predicted(testCase.text, b, c.method, c.headers));
      }
    }
    const s = await status(ward);
    expect(s.nacks).toEqual([]);
  });

  it('flips a decision within 1 s while a client calls in a loop, with no other failure', async () => {
    writeFileSync(join(dir, 'policy.yaml'), '# no policies\n');
    expect((await until(a.port, 'Admin', 'OK', 2_000)).outcomes.at(-1)).toBe('OK');
    const changedAt = Date.now();
    writeFileSync(join(dir, 'policy.yaml'), policy('deny-admin', 'foo', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Admin"]\n`));
    const flipped = await until(a.port, 'Admin', 'PERMISSION_DENIED', 3_000);
    const flipMs = Date.now() - changedAt;
    expect(flipped.outcomes.at(-1)).toBe('PERMISSION_DENIED');
    expect(flipped.outcomes.every((o) => o === 'OK' || o === 'PERMISSION_DENIED')).toBe(true);
    expect(flipMs).toBeLessThan(1_000);
  });

  it('refuses an invalid change with validate\'s diagnostics and keeps enforcing the last good policy', async () => {
    writeFileSync(join(dir, 'policy.yaml'), policy('deny-admin', 'foo', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Admin"]\n`));
    expect((await until(a.port, 'Admin', 'PERMISSION_DENIED', 2_000)).outcomes.at(-1)).toBe('PERMISSION_DENIED');
    const before = (await status(ward)).version;
    writeFileSync(join(dir, 'policy.yaml'), policy('deny-admin', 'foo', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        methods: [""]\n`));
    const refusal = async () => ward.lines.find((l) => l['msg'] === 'policy change refused; the last good configuration stays served' && String(l['report']).includes('deny-admin'));
    for (let i = 0; i < 100 && (await refusal()) === undefined; i += 1) await new Promise((r) => setTimeout(r, 20));
    const refused = await refusal();
    expect(String(refused?.['report'])).toContain('Error: 1 error occurred');
    expect((await status(ward)).version).toBe(before);
    expect(await call(a.port, 'Admin')).toBe('PERMISSION_DENIED');
    expect(await call(a.port, 'Echo')).toBe('OK');

    // The HTTP API refuses it the same way, and accepts a valid set.
    const bad = await fetch(`http://127.0.0.1:${ward.httpPort}/xds/policies`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'api.yaml', content: policy('x', 'foo', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        methods: [""]\n`) }] }),
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { report: string }).report).toContain('api.yaml');
    expect(await call(a.port, 'Admin')).toBe('PERMISSION_DENIED');
  });

  it('keeps the previous listener enforced when a server NACKs, logs the NACK once, and recovers', async () => {
    const c = await startWorkload(xds, ward.xdsPort, 'echo-c', 'nack', { app: 'c' });
    const base = policy('deny-admin', 'nack', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Admin"]\n`);
    writeFileSync(join(dir, 'policy.yaml'), base);
    expect((await until(c.port, 'Admin', 'PERMISSION_DENIED', 2_000)).outcomes.at(-1)).toBe('PERMISSION_DENIED');
    // STRICT mTLS needs the bootstrap's `default` certificate provider, which echo-c lacks: it NACKs.
    const strict = `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: strict\n  namespace: nack\nspec:\n  mtls:\n    mode: STRICT\n`;
    writeFileSync(join(dir, 'policy.yaml'), `${base}---\n${strict}`);
    let nacks: Awaited<ReturnType<typeof status>>['nacks'] = [];
    for (let i = 0; i < 100 && nacks.length === 0; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
      nacks = (await status(ward)).nacks.filter((n) => n.nodeId.includes('echo-c'));
    }
    expect(nacks).toHaveLength(1);
    expect(nacks[0]?.message).toContain('tls_certificate_provider_instance');
    // Still the previous (plaintext, DENY Admin) listener.
    expect(await call(c.port, 'Admin')).toBe('PERMISSION_DENIED');
    expect(await call(c.port, 'Echo')).toBe('OK');
    // Not resent: a second look finds the same single NACK.
    await new Promise((r) => setTimeout(r, 300));
    expect((await status(ward)).nacks.filter((n) => n.nodeId.includes('echo-c'))).toHaveLength(1);
    expect(ward.lines.some((l) => l['msg'] === 'xds NACK: the client rejected the resources; keeping them until the configuration changes' && String(l['error']).includes('tls_certificate_provider_instance'))).toBe(true);
    // Reverting the change serves a new version the server accepts.
    writeFileSync(join(dir, 'policy.yaml'), policy('deny-echo', 'nack', `  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${SERVICE}Echo"]\n`));
    expect((await until(c.port, 'Echo', 'PERMISSION_DENIED', 2_000)).outcomes.at(-1)).toBe('PERMISSION_DENIED');
    expect(await call(c.port, 'Admin')).toBe('OK');
    c.server.forceShutdown();
  });
});

function openssl(args: string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

/** A CA and leaf certificates with SPIFFE URI SANs, made now (never committed). */
function makeCertificates(dir: string, leaves: Record<string, string>, caName = 'ca'): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${caName}.key`, '-out', `${caName}.crt`, '-subj', `/O=ward-test-${caName}`, '-days', '1', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign'], dir);
  for (const [name, spiffe] of Object.entries(leaves)) {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=URI:${spiffe},IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n`);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/O=ward-test/CN=${name}`], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.crt`, '-CAkey', `${caName}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`], dir);
  }
}

describe('ward-mesh serve --xds: mTLS from PeerAuthentication through xDS credentials', () => {
  let xds: XdsModule;
  let ward: WardMesh;
  let dir: string;
  let certs: string;
  let server: Workload;
  const identity = (name: string, ca = 'ca'): ClientIdentity => ({
    name: `${name}@${ca}`,
    ca: readFileSync(join(certs, 'ca.crt')),
    key: readFileSync(join(certs, `${name}.key`)),
    cert: readFileSync(join(certs, `${name}.crt`)),
  });

  beforeAll(async () => {
    process.env['GRPC_XDS_EXPERIMENTAL_RBAC'] = 'true';
    xds = await import('@grpc/grpc-js-xds');
    xds.register();
    dir = mkdtempSync(join(tmpdir(), 'ward-mesh-xds-mtls-'));
    certs = mkdtempSync(join(tmpdir(), 'ward-mesh-xds-certs-'));
    makeCertificates(certs, { server: 'spiffe://cluster.local/ns/sec/sa/server', good: 'spiffe://cluster.local/ns/sec/sa/good', bad: 'spiffe://cluster.local/ns/other/sa/bad' });
    makeCertificates(certs, { rogue: 'spiffe://cluster.local/ns/sec/sa/good' }, 'rogue-ca');
    writeFileSync(join(dir, 'policy.yaml'), '');
    ward = await startWardMesh(['--policies', dir]);
    server = await startWorkload(xds, ward.xdsPort, 'secure', 'sec', { app: 'secure' }, {
      certificate_providers: {
        default: { plugin_name: 'file_watcher', config: { certificate_file: join(certs, 'server.crt'), private_key_file: join(certs, 'server.key'), ca_certificate_file: join(certs, 'ca.crt'), refresh_interval: '600s' } },
      },
    });
  });

  afterAll(() => {
    for (const client of clients.values()) client.close();
    clients.clear();
    server?.server.forceShutdown();
    ward?.child.kill('SIGTERM');
    for (const d of [dir, certs]) if (d !== undefined) rmSync(d, { recursive: true, force: true });
  });

  const STRICT = `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: strict\n  namespace: sec\nspec:\n  mtls:\n    mode: STRICT\n`;
  const PERMISSIVE = STRICT.replace('STRICT', 'PERMISSIVE').replace('name: strict', 'name: permissive');
  const ALLOW_GOOD = policy('allow-good', 'sec', `  rules:\n  - from:\n    - source:\n        principals: ["cluster.local/ns/sec/sa/good"]\n`);
  const DENY_OTHER_NS = policy('deny-other', 'sec', `  action: DENY\n  rules:\n  - from:\n    - source:\n        namespaces: ["other"]\n`);

  async function apply(text: string): Promise<void> {
    const before = Number((await status(ward)).version);
    writeFileSync(join(dir, 'policy.yaml'), text);
    await acked(ward, String(before + 1), ['secure.'], 1_000);
  }

  /** Transport failures (no TLS, untrusted certificate) all mean: no connection. */
  const normalize = (o: CallOutcome): Predicted => (o.startsWith('other:UNAVAILABLE') ? 'NO_CONNECTION' : o);

  it('STRICT: principals and namespaces decide over mTLS, plaintext and untrusted certificates never connect', async () => {
    const text = `${STRICT}---\n${ALLOW_GOOD}---\n${DENY_OTHER_NS}`;
    await apply(text);
    // grpc-js-xds reads the certificate files asynchronously the first time a TLS chain needs
    // them: handshakes right after the switch to STRICT can fail until then.
    for (let i = 0; i < 100 && (await call(server.port, 'Echo', {}, identity('good'))) !== 'OK'; i += 1) await new Promise((r) => setTimeout(r, 30));
    const cases: Array<[string, ClientIdentity | undefined, string | undefined, Predicted]> = [
      ['good', identity('good'), 'cluster.local/ns/sec/sa/good', 'OK'],
      ['bad (other namespace)', identity('bad'), 'cluster.local/ns/other/sa/bad', 'PERMISSION_DENIED'],
      ['plaintext', undefined, undefined, 'NO_CONNECTION'],
    ];
    for (const [title, id, principal, expected] of cases) {
      const outcome = normalize(await call(server.port, 'Echo', {}, id));
      expect({ title, outcome }).toEqual({ title, outcome: expected });
      expect({ title, outcome }).toEqual({ title, outcome: predicted(text, server, 'Echo', {}, principal) });
    }
    // A certificate from another CA: the handshake fails (the simulator's untrusted certificate).
    const rogue = { name: 'rogue', ca: readFileSync(join(certs, 'ca.crt')), key: readFileSync(join(certs, 'rogue.key')), cert: readFileSync(join(certs, 'rogue.crt')) };
    expect(normalize(await call(server.port, 'Echo', {}, rogue))).toBe('NO_CONNECTION');
  });

  it('PERMISSIVE is served as plaintext (istiod\'s gRPC generator has no permissive chain): plaintext callers connect, principals never match', async () => {
    const text = `${PERMISSIVE}---\n${policy('allow-good', 'sec', `  rules:\n  - from:\n    - source:\n        principals: ["cluster.local/ns/sec/sa/good"]\n    to:\n    - operation:\n        paths: ["${SERVICE}Admin"]\n  - to:\n    - operation:\n        paths: ["${SERVICE}Echo"]\n`)}`;
    await apply(text);
    expect(await until(server.port, 'Echo', 'OK', 2_000).then((r) => r.outcomes.at(-1))).toBe('OK');
    expect(await call(server.port, 'Admin')).toBe('PERMISSION_DENIED');
    expect(normalize(await call(server.port, 'Echo', {}, identity('good')))).toBe('NO_CONNECTION');
  });
});

// Random ALLOW/DENY policies built from what a proxyless server can express, applied through the
// HTTP API, and random calls: the real outcome must equal the simulator's (sidecar) prediction.
const pathValue = fc.constantFrom(`${SERVICE}Echo`, `${SERVICE}Admin`, `${SERVICE}*`, '*', '*/Admin', '/other*', `${SERVICE}Ech*`);
const operation = fc.record(
  {
    paths: fc.array(pathValue, { minLength: 1, maxLength: 2 }),
    notPaths: fc.array(pathValue, { minLength: 1, maxLength: 2 }),
    methods: fc.array(fc.constantFrom('POST', 'GET', 'PO*', '*'), { minLength: 1, maxLength: 2 }),
    hosts: fc.array(fc.constantFrom('127.0.0.1*', '*', 'example.com', '*.com'), { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: [] },
).filter((o) => Object.keys(o).length > 0); // an empty operation is invalid (validate refuses it)
const condition = fc.oneof(
  fc.record({ key: fc.constant('request.headers[x-user]'), values: fc.array(fc.constantFrom('alice', 'bob', 'ali*', '*'), { minLength: 1, maxLength: 2 }) }),
  // source.ip is left out: see the known difference below (IPv4 CIDRs never match in grpc-js-xds).
  fc.record({ key: fc.constant('request.headers[x-user]'), notValues: fc.array(fc.constantFrom('alice', 'bob'), { minLength: 1, maxLength: 1 }) }),
);
const rule = fc.record(
  {
    to: fc.array(fc.record({ operation }), { minLength: 1, maxLength: 2 }),
    when: fc.array(condition, { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const randomPolicy = fc.record({ name: fc.constantFrom('p1', 'p2', 'p3'), action: fc.constantFrom('ALLOW', 'DENY'), rules: fc.array(rule, { minLength: 1, maxLength: 3 }) });
const randomCall = fc.record({ method: fc.constantFrom<'Echo' | 'Admin'>('Echo', 'Admin'), user: fc.constantFrom<string | undefined>(undefined, 'alice', 'bob') });

function policiesYaml(policies: ReadonlyArray<{ name: string; action: string; rules: unknown[] }>): string {
  const seen = new Set<string>();
  return policies
    .filter((p) => !seen.has(p.name) && seen.add(p.name))
    .map((p) => JSON.stringify({ apiVersion: 'security.istio.io/v1', kind: 'AuthorizationPolicy', metadata: { name: p.name, namespace: 'foo' }, spec: { action: p.action, rules: p.rules } }))
    .join('\n---\n');
}

describe('ward-mesh serve --xds: random policies against a real proxyless server', () => {
  let xds: XdsModule;
  let ward: WardMesh;
  let server: Workload;

  beforeAll(async () => {
    process.env['GRPC_XDS_EXPERIMENTAL_RBAC'] = 'true';
    xds = await import('@grpc/grpc-js-xds');
    xds.register();
    ward = await startWardMesh();
    server = await startWorkload(xds, ward.xdsPort, 'fuzz', 'foo', { app: 'fuzz' });
  });

  afterAll(() => {
    for (const client of clients.values()) client.close();
    clients.clear();
    server?.server.forceShutdown();
    ward?.child.kill('SIGTERM');
  });

  it('known difference: IPv4 source.ip never matches, grpc-js-xds sees the peer as ::ffff:127.0.0.1 (server.js listens on every interface)', async () => {
    const text = policiesYaml([{ name: 'deny-local', action: 'DENY', rules: [{ when: [{ key: 'source.ip', values: ['127.0.0.0/8'] }] }] }]);
    const response = await fetch(`http://127.0.0.1:${ward.httpPort}/xds/policies`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ inputs: [{ name: 'ip.yaml', content: text }] }) });
    const body = (await response.json()) as { accepted: boolean; version: string };
    expect(body.accepted).toBe(true);
    await acked(ward, body.version, ['fuzz.'], 5_000);
    expect(predicted(text, server, 'Echo', {}, undefined, '127.0.0.1')).toBe('PERMISSION_DENIED');
    expect(await call(server.port, 'Echo')).toBe('OK');
  });

  it('decides every call as the simulator predicts (fast-check, 150 policy sets x 4 calls)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(randomPolicy, { minLength: 1, maxLength: 3 }), fc.array(randomCall, { minLength: 4, maxLength: 4 }), async (policies, calls) => {
        const text = policiesYaml(policies);
        const response = await fetch(`http://127.0.0.1:${ward.httpPort}/xds/policies`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ inputs: [{ name: 'fuzz.yaml', content: text }] }) });
        const body = (await response.json()) as { accepted: boolean; version: string; report: string };
        if (!body.accepted) throw new Error(`refused: ${body.report}`);
        await acked(ward, body.version, ['fuzz.'], 5_000);
        for (const c of calls) {
          const headers: Record<string, string> = c.user === undefined ? {} : { 'x-user': c.user };
          const real = await call(server.port, c.method, headers);
          const expected = predicted(text, server, c.method, headers, undefined, '127.0.0.1');
          if (real !== expected) throw new Error(`${c.method} ${JSON.stringify(headers)}: real ${real}, predicted ${expected}`);
        }
      }),
      { numRuns: 150, endOnFailure: false },
    );
  });
});
