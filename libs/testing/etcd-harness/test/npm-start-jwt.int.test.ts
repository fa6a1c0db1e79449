// `npm start` with WARD_AUTH_TOKEN=jwt: a token-service runs next to the gateway, etcdctl's
// Authenticate is answered with its JWTs (the README's first-time auth setup works unchanged), its
// key set is served, and Ctrl-C stops all five processes.
import { WORKSPACE_ROOT, freePorts } from '@ward/testing/cluster';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, runEtcdctl, waitUntil } from '../src/index';

describe('npm start with WARD_AUTH_TOKEN=jwt', () => {
  let dataDir: string;
  let ports: number[];
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ward-start-jwt-'));
    ports = await freePorts(13);
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs a token-service, etcdctl gets its JWTs, Ctrl-C stops everything', async () => {
    const env = {
      ...process.env,
      WARD_DATA_DIR: dataDir,
      WARD_CLIENT_PORT: String(ports[0]),
      WARD_HTTP_PORT: String(ports[1]),
      WARD_NODE_API_PORTS: ports.slice(2, 5).join(','),
      WARD_NODE_PEER_PORTS: ports.slice(5, 8).join(','),
      WARD_NODE_HTTP_PORTS: ports.slice(8, 11).join(','),
      WARD_TOKEN_SERVICE_PORT: String(ports[11]),
      WARD_TOKEN_SERVICE_HTTP_PORT: String(ports[12]),
      WARD_BCRYPT_COST: '4',
      WARD_AUTH_TOKEN: 'jwt',
    };
    const endpoint = `127.0.0.1:${ports[0]}`;
    const child = spawn(process.execPath, ['tools/start.mjs'], { cwd: WORKSPACE_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<string>((done) => child.once('exit', (code, signal) => done(signal ?? `exit ${code}`)));
    try {
      // The ready block's last line: its lines are separate writes, and a pipe may hand them over apart.
      await waitUntil('npm start to print its ready lines', () => output.includes('ward: with auth enabled') || child.exitCode !== null, 90_000, 100);
      expect(output, output).toContain('ward: tokens are JWTs from the token-service');
      expect([...output.matchAll(/started (\S+) \(pid \d+\)/g)].map((match) => match[1]).sort()).toEqual(['etcd-gateway', 'raft-node-1', 'raft-node-2', 'raft-node-3', 'token-service']);
      expect((await runEtcdctl({ endpoints: [endpoint], args: ['user', 'add', 'root', '--new-user-password=root-pw'] })).exitCode).toBe(0);
      expect((await runEtcdctl({ endpoints: [endpoint], args: ['auth', 'enable'] })).stdout).toContain('Authentication Enabled');
      const put = await runEtcdctl({ endpoints: [endpoint], user: { name: 'root', password: 'root-pw' }, args: ['put', 'foo', 'bar'] });
      expect(put, `${put.stderr}\n${output}`).toMatchObject({ exitCode: 0, stdout: 'OK\n' });
      const client = new EtcdGrpcClient(endpoint);
      const token = await client.authenticate('root', 'root-pw');
      client.close();
      const kid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;
      const jwks = (await (await fetch(`http://127.0.0.1:${ports[12]}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
      expect(jwks.keys.map((key) => key.kid)).toContain(kid);
      // The operator revokes the key that signed it (the README's command): that token is refused,
      // etcdctl goes on working with tokens from a fresh key.
      const revoke = (password: string) =>
        execFileAsync(process.execPath, [join(WORKSPACE_ROOT, 'dist/apps/token-service/main.js'), 'revoke-key', kid, '--endpoint', `127.0.0.1:${ports[11]}`], password);
      expect(await revoke('wrong\n')).toMatchObject({ code: 1, stdout: 'revoke-key: etcdserver: authentication failed, invalid user ID or password\n' });
      expect(await revoke('root-pw\n')).toMatchObject({ code: 0, stdout: `revoked ${kid}\n` });
      const after = new EtcdGrpcClient(endpoint);
      expect(await after.call('KV', 'Range', { key: Buffer.from('foo') }, { token })).toMatchObject({ ok: false, details: 'etcdserver: revision of auth store is old' });
      after.close();
      const again = await runEtcdctl({ endpoints: [endpoint], user: { name: 'root', password: 'root-pw' }, args: ['get', 'foo', '--print-value-only'] });
      expect(again, again.stderr).toMatchObject({ exitCode: 0, stdout: 'bar\n' });
    } finally {
      process.kill(-child.pid!, 'SIGINT');
    }
    expect(await exited).toBe('exit 0');
    expect(output).toContain('ward: stopped');
  });
});

/** Runs a command with `input` on stdin; resolves to its exit code and output. */
function execFileAsync(command: string, args: string[], input: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { timeout: 30_000 }, (error, stdout) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }));
    child.stdin!.end(input);
  });
}
