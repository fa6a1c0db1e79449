// The real `ward-mesh serve --xds` process for the integration tests: started on free ports,
// its JSON log lines collected, resolved once it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import type * as XdsModuleNamespace from '@grpc/grpc-js-xds';
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

/**
 * An XdsServer workload answering Echo and Admin on `service` (each answer is `<name>:<path>`),
 * bootstrapped with `bootstrap`; resolves once ward-mesh served it a listener.
 */
export async function serveEchoWorkload(xds: typeof XdsModuleNamespace, service: grpc.ServiceDefinition, bootstrap: object, name: string, port: number): Promise<XdsModuleNamespace.XdsServer> {
  const server = new xds.XdsServer({ 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap), drainGraceTimeMs: 1_000 } as never);
  const reply = (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.from(`${name}:${call.getPath()}`));
  server.addService(service, { Echo: reply, Admin: reply });
  await new Promise<void>((resolveBind, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} was not served a listener`)), 30_000);
    server.bindAsync(`127.0.0.1:${port}`, new xds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()), (error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolveBind();
    });
  });
  return server;
}
