// TLS on the client port and client-certificate identities (etcd's --cert-file, --key-file,
// --trusted-ca-file, --client-cert-auth; checklist row 80, etcd's TestCtlV3AuthCertCN): the real
// etcdctl and the etcd3 npm client against a TLS gateway, with real etcd 3.4 run with the same
// flags and certificates as the oracle for every etcdctl transcript.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPki, freePorts, type CertificateFiles, type TestPki } from '@ward/testing/cluster';
import { ManagedProcess, httpOk, normalizeStderr, runEtcdctl, waitUntil, type EtcdctlResult } from '@ward/testing/etcd-harness';
import type { Gateway } from '../src/index';
import { startWardCluster, type WardCluster } from './support/ward-cluster';

const ROOT_PASSWORD = 'root-pw';
const CN_USER = 'example.com';
/** The Go client's log line before a refused call, as normalizeStderr keeps it. */
const DENIED_LOG = 'LOG warn | retrying of unary invoker failed | attempt=0 | error=rpc error: code = PermissionDenied desc = etcdserver: permission denied';

let dir: string;
let pki: TestPki;
let ward: WardCluster;
let tlsGateway: Gateway;
let etcd: ManagedProcess;
let etcdEndpoint: string;

interface Target {
  readonly name: 'ward' | 'etcd';
  readonly endpoint: string;
}

const targets = (): Target[] => [
  { name: 'ward', endpoint: tlsGateway.grpcAddress },
  { name: 'etcd', endpoint: etcdEndpoint },
];

/** etcdctl over TLS: the CA always, a client certificate when given. */
function ctl(target: Target, args: readonly string[], options: { client?: CertificateFiles | null; user?: string } = {}): Promise<EtcdctlResult> {
  const client = options.client === undefined ? pki.clients[CN_USER] : options.client;
  const tls = [`--cacert=${pki.caFile}`, ...(client ? [`--cert=${client.certFile}`, `--key=${client.keyFile}`] : [])];
  const user = options.user === undefined ? [] : [`--user=${options.user}`];
  return runEtcdctl({ endpoints: [target.endpoint], args: [...tls, ...user, ...args], timeoutMs: 20_000 });
}

async function startEtcd(): Promise<void> {
  const [client, peer, metrics] = await freePorts(3);
  etcdEndpoint = `127.0.0.1:${client}`;
  etcd = new ManagedProcess({
    name: 'etcd-tls',
    command: 'etcd',
    args: [
      '--name', 'tls',
      '--data-dir', join(dir, 'etcd'),
      '--listen-client-urls', `https://${etcdEndpoint}`,
      '--advertise-client-urls', `https://${etcdEndpoint}`,
      '--listen-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
      '--initial-cluster', `tls=http://127.0.0.1:${peer}`,
      '--listen-metrics-urls', `http://127.0.0.1:${metrics}`,
      '--cert-file', pki.server.certFile,
      '--key-file', pki.server.keyFile,
      '--trusted-ca-file', pki.caFile,
      '--client-cert-auth',
      '--bcrypt-cost', '4',
      '--logger', 'zap',
      '--log-level', 'error',
    ],
  });
  await waitUntil('etcd with TLS to become healthy', async () => {
    if (!etcd.alive) throw new Error(`etcd exited: ${etcd.output().slice(-2000)}`);
    return httpOk(`http://127.0.0.1:${metrics}/health`).catch(() => false);
  }, 30_000, 200);
}

/** Row 80's set-up, through etcdctl over TLS: root, and the CommonName's user holding `hoo`. */
async function setUp(target: Target): Promise<void> {
  const steps: string[][] = [
    ['user', 'add', `root:${ROOT_PASSWORD}`],
    ['user', 'grant-role', 'root', 'root'],
    ['user', 'add', `${CN_USER}:cn-pw`],
    ['role', 'add', 'cn-role'],
    ['role', 'grant-permission', 'cn-role', 'readwrite', 'hoo'],
    ['user', 'grant-role', CN_USER, 'cn-role'],
    ['auth', 'enable'],
  ];
  for (const args of steps) {
    const result = await ctl(target, args);
    expect(result.exitCode, `${target.name}: etcdctl ${args.join(' ')}: ${result.stderr}`).toBe(0);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ward-tls-'));
  pki = createTestPki(dir, [CN_USER, 'nobody.example']);
  ward = await startWardCluster();
  tlsGateway = await ward.addGateway({ certFile: pki.server.certFile, keyFile: pki.server.keyFile, trustedCaFile: pki.caFile, clientCertAuth: true });
  await startEtcd();
  for (const target of targets()) await setUp(target);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled([ward?.stop(), etcd?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('client-certificate identities (row 80), etcdctl against ward and etcd 3.4', () => {
  const transcript = async (target: Target): Promise<string[]> => {
    const lines: string[] = [];
    const record = async (label: string, run: Promise<EtcdctlResult>): Promise<void> => {
      const result = await run;
      const stderr = normalizeStderr(result.stderr, { baselineRevision: 0, endpoints: [target.endpoint] }).trim();
      lines.push([`${label} -> exit ${result.exitCode}:`, result.stdout.trim(), stderr].filter((part) => part !== '').join(' '));
    };
    await record('put hoo as the CommonName', ctl(target, ['put', 'hoo', 'bar']));
    await record('get hoo as the CommonName', ctl(target, ['get', 'hoo']));
    await record('put baz as the CommonName', ctl(target, ['put', 'baz', 'qux']));
    await record('get baz as the CommonName', ctl(target, ['get', 'baz']));
    await record('put baz with a token beside the certificate', ctl(target, ['put', 'baz', 'qux'], { user: `root:${ROOT_PASSWORD}` }));
    await record('get baz as another CommonName without a user', ctl(target, ['get', 'baz'], { client: pki.clients['nobody.example'] }));
    await record('user list as the CommonName (not admin)', ctl(target, ['user', 'list']));
    return lines;
  };

  it('gives the same transcript on both: the CommonName is the user; a token takes precedence', async () => {
    const [wardLines, etcdLines] = [await transcript(targets()[0]!), await transcript(targets()[1]!)];
    expect(wardLines).toEqual(etcdLines);
    // And what that transcript says, so that agreeing on something else would not pass.
    expect(wardLines).toEqual([
      'put hoo as the CommonName -> exit 0: OK',
      'get hoo as the CommonName -> exit 0: hoo\nbar',
      `put baz as the CommonName -> exit 1: ${DENIED_LOG}\nError: etcdserver: permission denied`,
      `get baz as the CommonName -> exit 1: ${DENIED_LOG}\nError: etcdserver: permission denied`,
      'put baz with a token beside the certificate -> exit 0: OK',
      `get baz as another CommonName without a user -> exit 1: ${DENIED_LOG}\nError: etcdserver: permission denied`,
      `user list as the CommonName (not admin) -> exit 1: ${DENIED_LOG}\nError: etcdserver: permission denied`,
    ]);
  }, 120_000);

  it('refuses a client without a certificate, or with one from another CA, on both', async () => {
    for (const target of targets()) {
      // A refused handshake is retried until the command timeout: keep it short.
      const none = await ctl(target, ['--command-timeout=3s', 'get', 'hoo'], { client: null });
      expect(none.exitCode, `${target.name} without a client certificate`).not.toBe(0);
      const untrusted = await ctl(target, ['--command-timeout=3s', 'get', 'hoo'], { client: pki.untrustedClient });
      expect(untrusted.exitCode, `${target.name} with an untrusted client certificate`).not.toBe(0);
      expect(`${none.stdout}${untrusted.stdout}`).not.toContain('bar');
    }
  }, 120_000);

  it('the etcd3 npm client with a client certificate acts as its CommonName', async () => {
    const client = new Etcd3({
      hosts: `https://${tlsGateway.grpcAddress}`,
      credentials: {
        rootCertificate: readFileSync(pki.caFile),
        certChain: readFileSync(pki.clients[CN_USER]!.certFile),
        privateKey: readFileSync(pki.clients[CN_USER]!.keyFile),
      },
    });
    try {
      await client.put('hoo').value('from-etcd3');
      expect(await client.get('hoo').string()).toBe('from-etcd3');
      await expect(client.put('baz').value('no')).rejects.toThrow(/permission denied/);
    } finally {
      client.close();
    }
  }, 60_000);

  it('with GATEWAY_HTTP_TLS the JSON gateway is HTTPS with the same certificate and client-certificate rule (curl)', async () => {
    const https = await ward.addGateway({ certFile: pki.server.certFile, keyFile: pki.server.keyFile, trustedCaFile: pki.caFile, clientCertAuth: true, httpTls: true });
    const client = pki.clients[CN_USER]!;
    const curl = (path: string, body: object, extra: string[] = []): Promise<{ code: number; stdout: string }> =>
      new Promise((resolve) => {
        execFile(
          'curl',
          ['-sS', '--max-time', '10', '--cacert', pki.caFile, ...extra, '-X', 'POST', '-d', JSON.stringify(body), `https://${https.httpAddress}${path}`],
          (error, stdout) => resolve({ code: error === null ? 0 : Number((error as { code?: number }).code ?? 1), stdout }),
        );
      });
    const withCert = ['--cert', client.certFile, '--key', client.keyFile];
    // Over the JSON gateway the certificate authenticates the connection, not a user (etcd ignores
    // a CommonName on gateway traffic): a token is still needed while auth is on.
    expect(JSON.parse((await curl('/v3/kv/range', { key: Buffer.from('hoo').toString('base64') }, withCert)).stdout)).toMatchObject({ code: 3, message: 'etcdserver: user name is empty' });
    const login = JSON.parse((await curl('/v3/auth/authenticate', { name: 'root', password: ROOT_PASSWORD }, withCert)).stdout) as { token: string };
    const asRoot = [...withCert, '-H', `Authorization: ${login.token}`];
    expect((await curl('/v3/kv/put', { key: Buffer.from('json/https').toString('base64'), value: Buffer.from('over-https').toString('base64') }, asRoot)).code).toBe(0);
    const range = JSON.parse((await curl('/v3/kv/range', { key: Buffer.from('json/https').toString('base64') }, asRoot)).stdout);
    expect(Buffer.from(range.kvs[0].value, 'base64').toString()).toBe('over-https');
    // No client certificate: refused in the handshake, as the gRPC port refuses it.
    expect((await curl('/v3/kv/range', {}, [])).code).not.toBe(0);
  }, 60_000);

  it('the client URL serves HTTP/1.1 over the same TLS listener (ALPN), as etcd does: /version, /health, the JSON gateway without the CommonName as user', async () => {
    const client = pki.clients[CN_USER]!;
    const curl = (endpoint: string, path: string, args: string[]): Promise<{ code: number; stdout: string }> =>
      new Promise((resolve) => {
        execFile('curl', ['-sS', '--max-time', '10', '--http1.1', '-w', ' %{http_code}', '--cacert', pki.caFile, ...args, `https://${endpoint}${path}`], (error, stdout) =>
          resolve({ code: error === null ? 0 : Number((error as { code?: number }).code ?? 1), stdout }),
        );
      });
    const withCert = ['--cert', client.certFile, '--key', client.keyFile];
    const answers = await Promise.all(
      targets().map(async (target) => ({
        version: Object.keys(JSON.parse((await curl(target.endpoint, '/version', withCert)).stdout.replace(/ 200$/, '')) as object),
        health: (await curl(target.endpoint, '/health', withCert)).stdout,
        range: (await curl(target.endpoint, '/v3/kv/range', [...withCert, '-X', 'POST', '-d', JSON.stringify({ key: Buffer.from('hoo').toString('base64') })])).stdout,
        withoutCertificate: (await curl(target.endpoint, '/version', [])).code === 0,
      })),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toEqual({
      version: ['etcdserver', 'etcdcluster'],
      health: '{"health":"true"} 200',
      // etcd 3.4 refuses gateway requests carrying a CommonName rather than ignore it.
      range: 'CommonName of client sending a request against gateway will be ignored and not used as expected\n 400',
      withoutCertificate: false,
    });
  }, 60_000);

  it('reports the https client URL in MemberList', async () => {
    const result = await ctl(targets()[0]!, ['member', 'list']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`https://${tlsGateway.grpcAddress}`);
  }, 60_000);
});
