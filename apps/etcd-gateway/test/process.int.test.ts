// The bundled gateway as a process (what `npm start` and deployments run): configured by GATEWAY_*
// variables, serving etcd clients, drained cleanly by SIGTERM; a bad configuration stops the boot.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, WORKSPACE_ROOT, buildRaftNodeBundle, freePorts } from '@ward/testing/cluster';
import { etcdTestClient } from '../src/testing/etcd-client';

const GATEWAY_BUNDLE = join(WORKSPACE_ROOT, 'dist', 'apps', 'etcd-gateway', 'main.js');

let cluster: LocalCluster;

beforeAll(async () => {
  execFileSync(process.execPath, [join(WORKSPACE_ROOT, 'tools', 'build-app.mjs'), 'apps/etcd-gateway'], { cwd: WORKSPACE_ROOT, stdio: 'pipe' });
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle() });
  await cluster.waitForLeader(20_000);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

function startGateway(env: Record<string, string>): { child: ChildProcess; output: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [GATEWAY_BUNDLE], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

async function waitFor(output: string[], text: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!output.join('').includes(text)) {
    if (Date.now() > deadline) throw new Error(`no "${text}" in: ${output.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the gateway process', () => {
  it('serves etcd clients from its GATEWAY_* configuration and stops cleanly on SIGTERM', async () => {
    const [grpcPort, httpPort] = await freePorts(2);
    const gateway = startGateway({
      GATEWAY_GRPC_PORT: String(grpcPort),
      GATEWAY_HTTP_PORT: String(httpPort),
      GATEWAY_NODE_ENDPOINTS: cluster.members.map((m) => m.apiAddress).join(','),
      GATEWAY_BCRYPT_COST: '4',
    });
    await waitFor(gateway.output, 'ready for etcd clients', 20_000);
    const etcd = etcdTestClient(`127.0.0.1:${grpcPort}`);
    expect((await etcd.call('KV', 'Put', { key: Buffer.from('p'), value: Buffer.from('1') })).ok).toBe(true);
    const health = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
    expect(health.status).toBe(200);
    etcd.close();
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(gateway.output.join('')).toContain('etcd gateway stopped');
  }, 60_000);

  it('refuses to start on a bad configuration, listing every problem', async () => {
    const gateway = startGateway({ GATEWAY_BCRYPT_COST: '99', GATEWAY_AUTH_TOKEN: 'jwt,sign-method=XX999', GATEWAY_NOPE: '1' });
    expect(await gateway.exited).toBe(2);
    const text = gateway.output.join('');
    expect(text).toContain('GATEWAY_BCRYPT_COST');
    expect(text).toContain('GATEWAY_NOPE: unknown option');
  }, 30_000);

  it('refuses to start when a JWT key file is missing (etcd refuses too)', async () => {
    const [grpcPort, httpPort] = await freePorts(2);
    const gateway = startGateway({ GATEWAY_GRPC_PORT: String(grpcPort), GATEWAY_HTTP_PORT: String(httpPort), GATEWAY_AUTH_TOKEN: 'jwt,sign-method=RS256,priv-key=/nonexistent/key.pem' });
    expect(await gateway.exited).toBe(1);
    expect(gateway.output.join('')).toContain('etcd-gateway failed to start');
  }, 30_000);
});
