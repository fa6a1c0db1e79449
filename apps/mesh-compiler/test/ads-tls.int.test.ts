/**
 * `ward-mesh serve --xds ... --xds-tls-cert/--xds-tls-key/--xds-tls-ca`: the real process serves
 * ADS over mTLS. A client with a certificate from the mesh CA subscribes; a client without one,
 * with one from another CA, or speaking plaintext never gets a response. Certificates are made by
 * openssl at test time.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { findMessageType } from '@ward/mesh/envoy-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startWardMesh, type WardMesh } from './support/ward-mesh-process';

const SAS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const requestType = findMessageType('envoy.service.discovery.v3.DiscoveryRequest');
const responseType = findMessageType('envoy.service.discovery.v3.DiscoveryResponse');
if (requestType === undefined || responseType === undefined) throw new Error('discovery messages missing');

function openssl(args: string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

/** A CA and leaf certificates signed by it (`san` as an openssl subjectAltName value). */
function makeCa(dir: string, ca: string, leaves: ReadonlyArray<{ name: string; san: string }>): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-subj', `/O=ward-test-${ca}`, '-days', '1', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign'], dir);
  for (const { name, san } of leaves) {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n`);
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/O=ward-test/CN=${name}`], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`], dir);
  }
}


/** Runs the CLI to completion (for start-up refusals). */
function runServe(extra: readonly string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, 'serve', ...extra], { env: { ...process.env, MESH_COMPILER_HTTP_PORT: '0', MESH_COMPILER_PROCESS_METRICS: 'false' }, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr };
}

type Subscribe = { ok: true; typeUrl: string; version: string } | { ok: false; code: string };

/** Opens an ADS stream, subscribes to one inbound listener and waits for the first response or the stream's end. */
async function subscribe(port: number, credentials: grpc.ChannelCredentials): Promise<Subscribe> {
  const client = new grpc.Client(`127.0.0.1:${port}`, credentials, { 'grpc.ssl_target_name_override': 'ward-mesh.istio-system.svc', 'grpc.default_authority': 'ward-mesh.istio-system.svc' });
  try {
    return await new Promise<Subscribe>((resolveSubscribe) => {
      const call = client.makeBidiStreamRequest(SAS, (b: Buffer) => b, (b: Buffer) => b, new grpc.Metadata(), { deadline: Date.now() + 5_000 });
      call.on('data', (bytes: Buffer) => {
        const response = responseType!.toObject(responseType!.decode(bytes), { defaults: true }) as { type_url: string; version_info: string };
        resolveSubscribe({ ok: true, typeUrl: response.type_url, version: response.version_info });
        call.cancel();
      });
      call.on('error', (error: grpc.ServiceError) => resolveSubscribe({ ok: false, code: grpc.status[error.code] ?? String(error.code) }));
      call.write(
        Buffer.from(
          requestType!
            .encode(requestType!.fromObject({ node: { id: 'sidecar~127.0.0.1~a.foo~foo.svc.cluster.local', metadata: { fields: { NAMESPACE: { stringValue: 'foo' } } } }, type_url: LDS, resource_names: ['xds.istio.io/grpc/lds/inbound/127.0.0.1:50051'] }))
            .finish(),
        ),
      );
    });
  } finally {
    client.close();
  }
}

describe('ward-mesh serve --xds with --xds-tls-* (ADS over mTLS)', () => {
  let dir: string;
  let ward: WardMesh;
  const pem = (name: string) => readFileSync(join(dir, name));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ward-mesh-ads-tls-'));
    makeCa(dir, 'mesh', [
      { name: 'ward', san: 'DNS:ward-mesh.istio-system.svc,IP:127.0.0.1' },
      { name: 'workload', san: 'URI:spiffe://cluster.local/ns/foo/sa/a' },
    ]);
    makeCa(dir, 'other', [{ name: 'intruder', san: 'URI:spiffe://cluster.local/ns/foo/sa/a' }]);
    ward = await startWardMesh(['--xds-tls-cert', join(dir, 'ward.crt'), '--xds-tls-key', join(dir, 'ward.key'), '--xds-tls-ca', join(dir, 'mesh.crt')]);
  });

  afterAll(() => {
    ward?.child.kill('SIGTERM');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a workload whose certificate comes from the mesh CA', async () => {
    expect(ward.lines.find((l) => l['msg'] === 'xds control plane listening')?.['xdsTransport']).toBe('mtls');
    expect(await subscribe(ward.xdsPort, grpc.credentials.createSsl(pem('mesh.crt'), pem('workload.key'), pem('workload.crt')))).toEqual({ ok: true, typeUrl: LDS, version: '0' });
  });

  it('refuses a client without a certificate, with one from another CA, and plaintext', async () => {
    expect(await subscribe(ward.xdsPort, grpc.credentials.createSsl(pem('mesh.crt')))).toEqual({ ok: false, code: 'UNAVAILABLE' });
    expect(await subscribe(ward.xdsPort, grpc.credentials.createSsl(pem('mesh.crt'), pem('intruder.key'), pem('intruder.crt')))).toEqual({ ok: false, code: 'UNAVAILABLE' });
    expect(await subscribe(ward.xdsPort, grpc.credentials.createInsecure())).toEqual({ ok: false, code: 'UNAVAILABLE' });
    // ... and the server still serves the mesh's workloads afterwards.
    expect(await subscribe(ward.xdsPort, grpc.credentials.createSsl(pem('mesh.crt'), pem('workload.key'), pem('workload.crt')))).toMatchObject({ ok: true });
  });

  it('refuses to start with an unreadable or mismatched TLS configuration, naming the flag and never the content', () => {
    expect(runServe(['--xds', '127.0.0.1:0', '--xds-tls-cert', join(dir, 'ward.crt'), '--xds-tls-key', join(dir, 'ward.crt'), '--xds-tls-ca', join(dir, 'mesh.crt')])).toEqual({
      status: 2,
      stderr: `ward-mesh: serve: --xds-tls-key ${JSON.stringify(join(dir, 'ward.crt'))} holds no PEM private key\n`,
    });
    expect(runServe(['--xds', '127.0.0.1:0', '--xds-tls-cert', join(dir, 'ward.crt'), '--xds-tls-key', join(dir, 'ward.key'), '--xds-tls-ca', join(dir, 'missing.crt')])).toEqual({
      status: 2,
      stderr: `ward-mesh: serve: --xds-tls-ca ${JSON.stringify(join(dir, 'missing.crt'))} cannot be read (ENOENT)\n`,
    });
    const mismatched = runServe(['--xds', '127.0.0.1:0', '--xds-tls-cert', join(dir, 'ward.crt'), '--xds-tls-key', join(dir, 'workload.key'), '--xds-tls-ca', join(dir, 'mesh.crt')]);
    expect(mismatched.status).toBe(2);
    expect(mismatched.stderr).toMatch(/^ward-mesh: serve: the xDS server could not start: /);
    expect(mismatched.stderr).not.toContain('PRIVATE KEY');
  });
});
