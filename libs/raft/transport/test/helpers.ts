import { createLogger } from '@ward/platform/logging';
import type { TlsMaterial } from '@ward/platform/grpc-server';
import { PeerTransport, startPeerServer, type PeerReceiver, type PeerTransportOptions, type PeerServer } from '../src/index';

export const silentLogger = createLogger({ name: 'transport-test', level: 'silent' });

/** A member: its transport, its peer server, and everything it received. */
export interface TestMember {
  readonly id: bigint;
  readonly transport: PeerTransport;
  server: PeerServer;
  port: number;
  readonly received: { from: bigint; message: Uint8Array }[];
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startMember(
  id: bigint,
  options: Partial<PeerTransportOptions> & { receiver?: PeerReceiver; port?: number; serverTls?: TlsMaterial } = {},
): Promise<TestMember> {
  const received: { from: bigint; message: Uint8Array }[] = [];
  const receiver: PeerReceiver = options.receiver ?? {
    onMessages(from, messages) {
      for (const message of messages) received.push({ from, message });
    },
  };
  const transport = new PeerTransport({ backoff: { initialMs: 20, maxMs: 200 }, connectTimeoutMs: 500, ...options, localId: id, receiver });
  const serve = (port: number) => startPeerServer(transport, { host: '127.0.0.1', port, logger: silentLogger, ...(options.serverTls === undefined ? {} : { tls: options.serverTls }) });
  const started = await serve(options.port ?? 0);
  const member: TestMember = {
    id,
    transport,
    server: started.server,
    port: started.port,
    received,
    async restart() {
      const again = await serve(member.port);
      member.server = again.server;
    },
    async close() {
      await transport.close();
      await member.server.stop(100);
    },
  };
  return member;
}

/** Polls until `condition` holds; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const startedMs = performance.now();
  while (!condition()) {
    if (performance.now() - startedMs > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - startedMs;
}

export function message(i: number, sizeBytes = 16): Uint8Array {
  const bytes = new Uint8Array(sizeBytes);
  new DataView(bytes.buffer).setUint32(0, i, true);
  for (let j = 4; j < sizeBytes; j++) bytes[j] = (i + j) & 0xff;
  return bytes;
}

export function indexOf(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
}
