// NodeConnection's channels, seen from the member's side of real HTTP/2 connections over loopback:
// Snapshot streams travel on a connection of their own that grants the member a 4 MiB
// flow-control window, while the unary and streams channels keep HTTP/2's 64 KiB, on which the
// member's bound on what a watcher leaves unread relies.
import { createServer, constants, type Http2Server, type ServerHttp2Session } from 'node:http2';
import { status as Status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeConnection } from './node-connection';

interface Seen {
  readonly path: string;
  readonly userAgent: string;
  /** The connection the call came on (one number per HTTP/2 session). */
  readonly session: number;
  /** The window the gateway granted on that connection (its SETTINGS_INITIAL_WINDOW_SIZE). */
  readonly initialWindowSize: number | undefined;
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A plaintext HTTP/2 server that records each call and answers UNIMPLEMENTED. */
async function recordingMember(): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const sessions = new Map<ServerHttp2Session, number>();
  const server: Http2Server = createServer();
  server.on('session', (session) => sessions.set(session, sessions.size + 1));
  server.on('stream', (stream, headers) => {
    const session = stream.session!;
    seen.push({
      path: String(headers[':path']),
      userAgent: String(headers['user-agent']),
      session: sessions.get(session as ServerHttp2Session)!,
      initialWindowSize: session.remoteSettings.initialWindowSize,
    });
    stream.on('error', () => undefined);
    stream.respond({ [constants.HTTP2_HEADER_STATUS]: 200, 'content-type': 'application/grpc', 'grpc-status': String(Status.UNIMPLEMENTED), 'grpc-message': 'not here' }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const session of sessions.keys()) session.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, seen };
}

function connectionTo(port: number): NodeConnection {
  const connection = new NodeConnection(`127.0.0.1:${port}`, { maxReceiveBytes: 1 << 20, maxSendBytes: 1 << 20, keepaliveTimeMs: 10_000, keepaliveTimeoutMs: 5_000 });
  cleanups.push(() => connection.close());
  return connection;
}

function ended(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    stream.on('error', () => resolve());
    stream.on('end', () => resolve());
    stream.on('data', () => undefined);
  });
}

describe('NodeConnection channels', () => {
  it('Snapshot streams have a connection of their own with a 4 MiB window; unary calls and the other streams keep 64 KiB, each on its own connection', async () => {
    const member = await recordingMember();
    const connection = connectionTo(member.port);
    const unary = await connection.call('Status', {}, Date.now() + 5000).then(
      () => 'answered',
      (error: { code?: number }) => error.code,
    );
    expect(unary).toBe(Status.UNIMPLEMENTED);
    await ended(connection.streamClient.Follow({}));
    await ended(connection.snapshotClient.Snapshot({}));
    await ended(connection.snapshotClient.Snapshot({}));
    const byPath = (path: string): Seen[] => member.seen.filter((seen) => seen.path === `/wardnode.Node/${path}`);
    const [status] = byPath('Status');
    const [follow] = byPath('Follow');
    const snapshots = byPath('Snapshot');
    expect(status!.userAgent).toMatch(/^ward-etcd-gateway-unary /);
    expect(follow!.userAgent).toMatch(/^ward-etcd-gateway-streams /);
    expect(snapshots.map((seen) => seen.userAgent)).toEqual([expect.stringMatching(/^ward-etcd-gateway-snapshots /), expect.stringMatching(/^ward-etcd-gateway-snapshots /)]);
    // Three connections; both snapshots on the same one.
    expect(new Set([status!.session, follow!.session, snapshots[0]!.session]).size).toBe(3);
    expect(snapshots[1]!.session).toBe(snapshots[0]!.session);
    expect(status!.initialWindowSize).toBe(65_535);
    expect(follow!.initialWindowSize).toBe(65_535);
    expect(snapshots[0]!.initialWindowSize).toBe(4 * 1024 * 1024);
  });
});
