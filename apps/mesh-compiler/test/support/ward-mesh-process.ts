// The real `ward-mesh serve --xds` process for the integration tests: started on free ports,
// its JSON log lines collected, resolved once it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const BIN = resolve(__dirname, '..', '..', 'bin', 'ward-mesh.mjs');

export interface WardMesh {
  readonly child: ChildProcess;
  readonly xdsPort: number;
  readonly httpPort: number;
  readonly lines: Array<Record<string, unknown>>;
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** `ward-mesh serve --xds 127.0.0.1:0 ...extra`, once it listens (its ADS and HTTP ports read from its log). */
export async function startWardMesh(extra: readonly string[] = []): Promise<WardMesh> {
  const child = spawn(process.execPath, [BIN, 'serve', '--xds', '127.0.0.1:0', ...extra], {
    env: { ...process.env, MESH_COMPILER_HTTP_PORT: '0', MESH_COMPILER_LOG_LEVEL: 'info', MESH_COMPILER_PROCESS_METRICS: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let buffered = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolveStart, reject) => {
    let xdsPort = 0;
    const timer = setTimeout(() => reject(new Error(`ward-mesh did not start: ${stderr}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`ward-mesh exited ${code}: ${stderr}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        lines.push(parsed);
        if (typeof parsed['xdsPort'] === 'number') xdsPort = parsed['xdsPort'];
        const address = parsed['address'] as { port?: number } | undefined;
        if (parsed['msg'] === 'mesh compiler listening' && address?.port !== undefined) {
          clearTimeout(timer);
          resolveStart({ child, xdsPort, httpPort: address.port, lines });
        }
      }
    });
  });
}
