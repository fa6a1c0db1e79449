// TLS around the token-service: the raft-nodes take only mutual TLS (RAFT_NODE_TLS_*), so the
// token-service presents its certificate to read and publish (TOKEN_SERVICE_NODE_TLS_*); its own
// gRPC port, which receives passwords, serves TLS and takes only callers with a certificate from
// the CA (TOKEN_SERVICE_CERT_FILE, KEY_FILE, CLIENT_CA_FILE); the gateway verifies it and presents
// its own (GATEWAY_TOKEN_SERVICE_CA_FILE with GATEWAY_NODE_TLS_*). Processes all of them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, type TestPki } from '@ward/testing/cluster';
import { EtcdGrpcClient, setupAuth, startWardCluster, type WardCluster } from '@ward/testing/etcd-harness';
import { wardTokenGrpc } from '@ward/etcd/proto';
import { jwtPart } from './support';

let dir: string;
let pki: TestPki;
let ward: WardCluster;
let etcd: EtcdGrpcClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'token-tls-'));
  pki = createTestPki(dir, ['etcd-gateway', 'token-service']);
  const nodeTls = { RAFT_NODE_TLS_CERT_FILE: pki.server.certFile, RAFT_NODE_TLS_KEY_FILE: pki.server.keyFile, RAFT_NODE_TLS_CA_FILE: pki.caFile };
  const gateway = pki.clients['etcd-gateway']!;
  const tokens = pki.clients['token-service']!;
  ward = await startWardCluster({
    bcryptCost: 4,
    nodeEnv: nodeTls,
    gatewayEnv: {
      GATEWAY_NODE_TLS_CERT_FILE: gateway.certFile,
      GATEWAY_NODE_TLS_KEY_FILE: gateway.keyFile,
      GATEWAY_NODE_TLS_CA_FILE: pki.caFile,
      GATEWAY_TOKEN_SERVICE_CA_FILE: pki.caFile,
    },
    tokenServiceEnv: {
      TOKEN_SERVICE_NODE_TLS_CERT_FILE: tokens.certFile,
      TOKEN_SERVICE_NODE_TLS_KEY_FILE: tokens.keyFile,
      TOKEN_SERVICE_NODE_TLS_CA_FILE: pki.caFile,
      TOKEN_SERVICE_CERT_FILE: pki.server.certFile,
      TOKEN_SERVICE_KEY_FILE: pki.server.keyFile,
      TOKEN_SERVICE_CLIENT_CA_FILE: pki.caFile,
    },
  });
  etcd = new EtcdGrpcClient(ward.clientEndpoint);
  await setupAuth(etcd, { users: [{ name: 'alice', password: 'alice-pw' }], roles: [], enable: false });
  expect((await etcd.call('Auth', 'AuthEnable', {})).ok).toBe(true);
});

afterAll(async () => {
  etcd?.close();
  await ward?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Issue straight at the token-service's port with the given channel credentials. */
function issueWith(channel: ReturnType<typeof credentials.createInsecure>): Promise<{ code: number } | 'ok'> {
  const client = new (wardTokenGrpc().Token)(ward.tokenServiceEndpoint!, channel);
  return new Promise((resolve) => {
    client.Issue({ name: Buffer.from('alice'), password: Buffer.from('alice-pw') }, { deadline: Date.now() + 5000 }, (error: ServiceError | null) => {
      client.close();
      resolve(error === null ? 'ok' : { code: error.code });
    });
  });
}

describe('token-service over TLS, raft-nodes over mutual TLS', () => {
  it('Authenticate through the gateway gets a token-service JWT that works', async () => {
    const token = await etcd.authenticate('alice', 'alice-pw');
    expect(jwtPart(token, 0)['alg']).toBe('EdDSA');
    // The token is accepted (alice holds no role, so her read is denied, not her token).
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('k') }, { token })).toMatchObject({ ok: false, code: 7, details: 'etcdserver: permission denied' });
    expect(await etcd.call('KV', 'Range', { key: Buffer.from('k') }, { token: `${token}x` })).toMatchObject({ ok: false, code: 16 });
  });

  it('the token-service port refuses plaintext and callers without a certificate from the CA', async () => {
    expect(await issueWith(credentials.createInsecure())).not.toBe('ok');
    expect(await issueWith(credentials.createSsl(readFileSync(pki.caFile)))).not.toBe('ok');
    const other = pki.untrustedClient;
    expect(await issueWith(credentials.createSsl(readFileSync(pki.caFile), readFileSync(other.keyFile), readFileSync(other.certFile)))).not.toBe('ok');
    const gateway = pki.clients['etcd-gateway']!;
    expect(await issueWith(credentials.createSsl(readFileSync(pki.caFile), readFileSync(gateway.keyFile), readFileSync(gateway.certFile)))).toBe('ok');
  });
});
