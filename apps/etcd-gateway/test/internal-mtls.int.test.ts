// Mutual TLS inside the cluster (RAFT_NODE_TLS_* on every member, GATEWAY_NODE_TLS_* on the
// gateway): the members elect a leader and replicate over TLS peer links, the gateway serves etcdctl
// through its certificate, and the internal API, which trusts the identity a caller stamps into
// its requests, turns away callers without a certificate from the cluster's CA.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Server, status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTlsMaterial, tlsChannelCredentials, tlsServerCredentials, type TlsMaterial } from '@ward/platform/grpc-server';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';
import { LocalCluster, NodeApiClient, buildRaftNodeBundle, createTestPki, type CertificateFiles, type TestPki } from '@ward/testing/cluster';
import { runEtcdctl } from '@ward/testing/etcd-harness';
import { createLogger } from '@ward/platform/logging';
import { createGateway, gatewayConfig, type Gateway } from '../src/index';
import { framedExchange } from '../src/cluster/exchange-frames';
import { NodeConnection } from '../src/cluster/node-connection';
import { NodeExchange, isNotServed } from '../src/cluster/node-exchange';

let dir: string;
let pki: TestPki;
let cluster: LocalCluster;
let gateway: Gateway;

const clientCredentials = (files: CertificateFiles, caFile = pki.caFile) =>
  tlsChannelCredentials(loadTlsMaterial({ certFile: files.certFile, keyFile: files.keyFile, caFile, names: { cert: 'cert', key: 'key', ca: 'ca' } }));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ward-mtls-'));
  pki = createTestPki(dir, ['etcd-gateway']);
  cluster = await LocalCluster.start({
    entry: buildRaftNodeBundle(),
    size: 3,
    env: { RAFT_NODE_TLS_CERT_FILE: pki.server.certFile, RAFT_NODE_TLS_KEY_FILE: pki.server.keyFile, RAFT_NODE_TLS_CA_FILE: pki.caFile },
    clientCredentials: clientCredentials(pki.clients['etcd-gateway']!),
  });
  await cluster.waitForLeader(20_000);
  const gatewayCert = pki.clients['etcd-gateway']!;
  gateway = await createGateway(
    gatewayConfig({
      grpcPort: 0,
      httpPort: 0,
      nodeEndpoints: cluster.members.map((m) => m.apiAddress),
      nodeTlsCertFile: gatewayCert.certFile,
      nodeTlsKeyFile: gatewayCert.keyFile,
      nodeTlsCaFile: pki.caFile,
      bcryptCost: 4,
    }),
    { logger: createLogger({ name: 'etcd-gateway', level: 'silent' }) },
  );
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('mutual TLS between the gateway and the raft-nodes, and between members', () => {
  it('elects a leader over TLS peer links and serves etcdctl through the gateway, every member applying', async () => {
    const endpoints = [gateway.grpcAddress];
    expect((await runEtcdctl({ endpoints, args: ['put', 'mtls/key', 'over-tls'] })).stdout.trim()).toBe('OK');
    const read = await runEtcdctl({ endpoints, args: ['get', 'mtls/key', '--print-value-only'] });
    expect(read.stdout.trim()).toBe('over-tls');
    // Every member applied the put: their applied revisions agree once the followers catch up.
    await expect
      .poll(async () => new Set((await cluster.statuses()).map((status) => status?.applied_index)).size, { timeout: 10_000 })
      .toBe(1);
  }, 60_000);

  it('refuses internal API callers in plaintext, over TLS without a client certificate, or with one from another CA', async () => {
    const address = cluster.members[0]!.apiAddress;
    const callers = [
      new NodeApiClient(address),
      new NodeApiClient(address, credentials.createSsl(loadTlsMaterial({ certFile: pki.server.certFile, keyFile: pki.server.keyFile, caFile: pki.caFile, names: { cert: 'c', key: 'k', ca: 'a' } }).ca)),
      new NodeApiClient(address, clientCredentials(pki.untrustedClient)),
    ];
    try {
      for (const caller of callers) await expect(caller.status(2000)).rejects.toThrow();
      // A certificate from the cluster's CA gets in (the same call, so the refusals above are TLS's).
      expect((await cluster.client(cluster.members[0]!.id).status(2000)).leader_id).not.toBe('0');
    } finally {
      for (const caller of callers) caller.close();
    }
  }, 60_000);

  it('takes framed Exchange connections (the gateway\'s hot path) only over TLS with a certificate from the cluster\'s CA', async () => {
    const address = cluster.members[0]!.apiAddress;
    const material = (files: CertificateFiles) => loadTlsMaterial({ certFile: files.certFile, keyFile: files.keyFile, caFile: pki.caFile, names: { cert: 'c', key: 'k', ca: 'a' } });
    const exchangeWith = (tls: TlsMaterial | null) =>
      new NodeExchange(framedExchange(address, { tls, maxReceiveBytes: 1 << 20, connectTimeoutMs: 5_000 }), { maxSendBytes: 1 << 20, nowMs: Date.now });
    const readIndex = (exchange: NodeExchange) => exchange.call({ read_index: { timeout_ms: 2000 } }, Date.now() + 3000);
    for (const refused of [exchangeWith(null), exchangeWith(material(pki.untrustedClient))]) {
      try {
        await expect(readIndex(refused)).rejects.toMatchObject({ code: Status.UNAVAILABLE });
      } finally {
        refused.close();
      }
    }
    const trusted = exchangeWith(material(pki.clients['etcd-gateway']!));
    try {
      const answer = await readIndex(trusted);
      expect(['read_index', 'not_leader']).toContain(answer.result);
    } finally {
      trusted.close();
    }
  }, 60_000);

  it('with a member that predates framed streams (its TLS port refuses their ALPN id), the gateway turns to the gRPC Exchange', async () => {
    const serverMaterial = loadTlsMaterial({ certFile: pki.server.certFile, keyFile: pki.server.keyFile, caFile: pki.caFile, names: { cert: 'c', key: 'k', ca: 'a' } });
    const old = new Server();
    const handlers: Record<string, unknown> = {};
    for (const name of Object.keys(wardNodeServiceDefinition())) handlers[name] = (_call: unknown, callback: (error: object) => void) => callback({ code: Status.UNIMPLEMENTED });
    handlers['Exchange'] = (stream: ServerDuplexStream<{ calls: Array<{ id: string }> }, object>) =>
      stream.on('data', (message: { calls: Array<{ id: string }> }) => stream.write({ answers: message.calls.map((call) => ({ id: call.id, answer: { read_index: '7' } })) }));
    old.addService(wardNodeServiceDefinition(), handlers as never);
    const port = await new Promise<number>((resolve, reject) => old.bindAsync('127.0.0.1:0', tlsServerCredentials(serverMaterial, true), (error, bound) => (error ? reject(error) : resolve(bound))));
    const gatewayMaterial = loadTlsMaterial({ certFile: pki.clients['etcd-gateway']!.certFile, keyFile: pki.clients['etcd-gateway']!.keyFile, caFile: pki.caFile, names: { cert: 'c', key: 'k', ca: 'a' } });
    const connection = new NodeConnection(`127.0.0.1:${port}`, { maxReceiveBytes: 1 << 20, maxSendBytes: 1 << 20, keepaliveTimeMs: 10_000, keepaliveTimeoutMs: 5_000, tls: gatewayMaterial, credentials: tlsChannelCredentials(gatewayMaterial) });
    try {
      const first = await connection.exchangeCall({ read_index: { timeout_ms: 2000 } }, Date.now() + 5000).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(first).toMatchObject({ code: Status.UNAVAILABLE });
      expect(isNotServed(first)).toBe(true);
      expect(connection.exchangeTransport).toBe('grpc');
      expect((await connection.exchangeCall({ read_index: { timeout_ms: 2000 } }, Date.now() + 5000)).read_index).toBe('7');
    } finally {
      connection.close();
      old.forceShutdown();
    }
  }, 60_000);
});
