/**
 * `ward-mesh serve` when its HTTP port is taken: the process says so and exits, closing the xDS
 * server it had started, rather than staying up without its HTTP side.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { occupiedPort } from '@ward/testing/cluster';
import { BIN } from './support/ward-mesh-process';

const squatter = await occupiedPort();
const taken = squatter.port;
afterAll(() => squatter.release());

describe('ward-mesh serve with its HTTP port in use', () => {
  it('exits with code 2, naming the cause, after the xDS server had started', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--xds', '127.0.0.1:0'], {
      env: { ...process.env, MESH_COMPILER_HTTP_HOST: '127.0.0.1', MESH_COMPILER_HTTP_PORT: String(taken), MESH_COMPILER_PROCESS_METRICS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000))]);
    if (code === 'running') child.kill('SIGKILL');
    expect(stdout).toContain('xds control plane listening');
    expect(code).toBe(2);
    expect(stderr).toBe(`ward-mesh: serve: the HTTP server could not start: listen EADDRINUSE: address already in use 127.0.0.1:${taken}\n`);
  }, 40_000);
});
