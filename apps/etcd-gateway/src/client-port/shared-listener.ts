// The client port as etcd serves it: one listener, two protocols. A connection whose first bytes
// are the HTTP/2 connection preface goes to the gRPC server, anything else to the HTTP/1.1 server
// (the JSON gateway, /version, /health, /metrics). Under TLS the listener terminates TLS itself and
// dispatches on the ALPN protocol the client chose (h2: gRPC; http/1.1: HTTP), falling back to the
// first decrypted bytes when the client offered none. Deciding costs at most the preface's 24
// bytes and `sniffTimeoutMs`: a connection that sends less in that time is closed, so a slow
// client cannot hold sockets open before either server's own timeouts apply.
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';

/** What every HTTP/2 client sends first (RFC 9113 §3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export type ClientProtocol = 'grpc' | 'http';

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
  /** Takes a connection that speaks HTTP/2 (gRPC); the bytes read so far are back in the stream. */
  readonly grpc: (socket: Duplex) => void;
  /** Takes a connection that speaks HTTP/1.x. */
  readonly http: (socket: Duplex) => void;
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
 * The protocol the bytes read so far tell, or undefined while they are a strict prefix of the
 * HTTP/2 preface (more bytes are needed to tell).
 */
export function protocolOf(bytes: Buffer): ClientProtocol | undefined {
  const n = Math.min(bytes.length, HTTP2_PREFACE.length);
  if (bytes.subarray(0, n).compare(HTTP2_PREFACE.subarray(0, n)) !== 0) return 'http';
  return n === HTTP2_PREFACE.length ? 'grpc' : undefined;
}

/** Binds the shared client port. */
export async function startSharedListener(options: SharedListenerOptions): Promise<SharedListener> {
  for (const name of ['sniffTimeoutMs', 'maxConnectionsCount'] as const) {
    if (!Number.isSafeInteger(options[name]) || options[name] <= 0) throw new TypeError(`startSharedListener: ${name} must be a positive integer, got ${options[name]}`);
  }
  const sniffing = new Set<Duplex>();
  /** Every accepted connection still open (the TCP sockets, under TLS too). */
  const open = new Set<Socket>();

  const hand = (socket: Duplex, protocol: ClientProtocol): void => {
    sniffing.delete(socket);
    if (protocol === 'grpc') options.grpc(socket);
    else {
      options.http(socket);
      // The HTTP server reads in flowing mode; the preface check paused the socket.
      socket.resume();
    }
  };

  /** Reads until the first bytes tell the protocol, then hands the socket over with those bytes unread. */
  const sniff = (socket: Duplex, timer: NodeJS.Timeout): void => {
    sniffing.add(socket);
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const protocol = protocolOf(seen);
      if (protocol === undefined) return;
      socket.removeListener('data', onData);
      socket.removeListener('close', onClose);
      socket.pause();
      clearTimeout(timer);
      socket.unshift(seen);
      hand(socket, protocol);
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
      ALPNProtocols: ['h2', 'http/1.1'],
      handshakeTimeout: options.sniffTimeoutMs,
      noDelay: true,
    });
    tlsServer.on('secureConnection', (socket: TLSSocket) => {
      swallow(socket);
      const alpn = socket.alpnProtocol;
      if (alpn === 'h2') {
        socket.pause();
        hand(socket, 'grpc');
      } else if (alpn === 'http/1.1') {
        socket.pause();
        hand(socket, 'http');
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
