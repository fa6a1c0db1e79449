// One listener, several protocols: a connection goes to the protocol its first bytes announce (a
// preface such as HTTP/2's), or under TLS to the one its client chose by ALPN, falling back to the
// first decrypted bytes when the client offered none. Bytes that match no preface go to the
// fallback protocol, or the connection is closed when there is none. Deciding costs at most the
// longest preface and `sniffTimeoutMs`: a connection that sends less in that time is closed, so a
// slow client cannot hold sockets open before any server's own timeouts apply. The etcd-gateway's
// client port serves gRPC and HTTP/1.1 this way (as etcd's client URL does); a raft-node's peer
// port serves gRPC and the raft frame stream.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';

/** What every HTTP/2 client sends first (RFC 9113 §3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface SharedProtocol {
  /** A name for tests and logs. */
  readonly name: string;
  /** The first bytes that select this protocol; none: selected by ALPN or as the fallback only. */
  readonly preface?: Buffer;
  /** The ALPN protocol id that selects it under TLS (offered by the server in this order). */
  readonly alpn?: string;
  /** Takes a connection, paused, with the bytes read so far back in the stream. */
  readonly take: (socket: Duplex) => void;
}

export interface SharedListenerOptions {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** Terminate TLS with this certificate, key and CA bundle (null: plaintext). */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer | null; readonly requireClientCertificate: boolean } | null;
  /** A connection that has not told its protocol (TLS handshake included) within this is closed. */
  readonly sniffTimeoutMs: number;
  /** Connections open at once on the port; more are refused at accept. */
  readonly maxConnectionsCount: number;
  readonly protocols: readonly SharedProtocol[];
  /** Takes connections whose first bytes match no preface; none: they are closed. */
  readonly fallback?: SharedProtocol;
}

export interface SharedListener {
  readonly port: number;
  /** Connections still deciding their protocol (for tests and metrics). */
  sniffingCount(): number;
  /**
   * Stops accepting and closes connections still deciding at once; handed-over ones are their
   * server's to close, and whatever is still open after `graceMs` is cut.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * The protocol the bytes read so far select: one whose preface they start with, undefined while
 * they are a strict prefix of some preface (more bytes are needed to tell), null when they match
 * none (the fallback's, if any).
 */
export function protocolOf(bytes: Buffer, protocols: readonly SharedProtocol[]): SharedProtocol | null | undefined {
  let undecided = false;
  for (const protocol of protocols) {
    const preface = protocol.preface;
    if (preface === undefined) continue;
    const n = Math.min(bytes.length, preface.length);
    if (bytes.subarray(0, n).compare(preface.subarray(0, n)) !== 0) continue;
    if (n === preface.length) return protocol;
    undecided = true;
  }
  return undecided ? undefined : null;
}

/** Binds the shared port. */
export async function startSharedListener(options: SharedListenerOptions): Promise<SharedListener> {
  const byAlpn = new Map(options.protocols.flatMap((p) => (p.alpn === undefined ? [] : [[p.alpn, p] as const])));
  for (const name of ['sniffTimeoutMs', 'maxConnectionsCount'] as const) {
    if (!Number.isSafeInteger(options[name]) || options[name] <= 0) throw new TypeError(`startSharedListener: ${name} must be a positive integer, got ${options[name]}`);
  }
  const sniffing = new Set<Duplex>();
  /** Every accepted connection still open (the TCP sockets, under TLS too). */
  const open = new Set<Socket>();

  const hand = (socket: Duplex, protocol: SharedProtocol): void => {
    sniffing.delete(socket);
    protocol.take(socket);
  };

  /** Reads until the first bytes tell the protocol, then hands the socket over with those bytes unread. */
  const sniff = (socket: Duplex, timer: NodeJS.Timeout): void => {
    sniffing.add(socket);
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const protocol = protocolOf(seen, options.protocols);
      if (protocol === undefined) return;
      socket.removeListener('data', onData);
      socket.removeListener('close', onClose);
      socket.pause();
      clearTimeout(timer);
      const chosen = protocol ?? options.fallback;
      if (chosen === undefined) {
        sniffing.delete(socket);
        socket.destroy();
        return;
      }
      socket.unshift(seen);
      hand(socket, chosen);
    };
    const onClose = (): void => {
      clearTimeout(timer);
      sniffing.delete(socket);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  };

  const deadline = (socket: Duplex): NodeJS.Timeout => {
    const timer = setTimeout(() => socket.destroy(), options.sniffTimeoutMs);
    timer.unref();
    return timer;
  };

  const swallow = (socket: Duplex): void => {
    // Resets and TLS errors of a connection are the client's business; the servers handed to
    // add their own handling.
    socket.on('error', () => socket.destroy());
  };

  let server: NetServer;
  if (options.tls === null) {
    server = createNetServer({ pauseOnConnect: false, noDelay: true }, (socket: Socket) => {
      swallow(socket);
      sniff(socket, deadline(socket));
    });
  } else {
    const tls = options.tls;
    const tlsServer = createTlsServer({
      cert: tls.cert,
      key: tls.key,
      ...(tls.ca === null ? {} : { ca: tls.ca }),
      requestCert: tls.requireClientCertificate,
      rejectUnauthorized: tls.requireClientCertificate,
      ALPNProtocols: [...byAlpn.keys()],
      handshakeTimeout: options.sniffTimeoutMs,
      noDelay: true,
    });
    tlsServer.on('secureConnection', (socket: TLSSocket) => {
      swallow(socket);
      const chosen = typeof socket.alpnProtocol === 'string' ? byAlpn.get(socket.alpnProtocol) : undefined;
      if (chosen !== undefined) {
        socket.pause();
        hand(socket, chosen);
      } else sniff(socket, deadline(socket));
    });
    // A failed handshake is the client's problem; the socket is already destroyed.
    tlsServer.on('tlsClientError', () => undefined);
    server = tlsServer;
  }
  server.maxConnections = options.maxConnectionsCount;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  let closing: Promise<void> | undefined;
  return {
    port,
    sniffingCount: () => sniffing.size,
    close(graceMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of open) socket.destroy();
        }, graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        for (const socket of sniffing) socket.destroy();
        sniffing.clear();
      });
      return closing;
    },
  };
}
