import { createServer } from 'node:net';

/** Most ports one call may ask for; a test needing more is doing something else. */
const MAX_PORTS_PER_CALL = 64;

/**
 * `count` distinct TCP ports on `host` that were free a moment ago: the kernel picks them for
 * listeners held open together, then closed again. Another process may still take one before the
 * caller binds it; the window is short and the cluster starters retry a failed start on fresh ports.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_PORTS_PER_CALL) {
    throw new RangeError(`freePorts: count must be 1..${MAX_PORTS_PER_CALL}, got ${count}`);
  }
  const listeners = await Promise.all(Array.from({ length: count }, () => listenOnAnyPort(host)));
  const ports = listeners.map((listener) => listener.port);
  await Promise.all(listeners.map((listener) => listener.release()));
  return ports;
}

/** A TCP port free on `host` right now (the OS picks it; bind it soon, others could take it). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [port] = await freePorts(1, host);
  return port!;
}

/** A port on `host` held by a listener that accepts and ignores (for tests of a port in use). */
export function occupiedPort(host = '127.0.0.1'): Promise<HeldPort> {
  return listenOnAnyPort(host);
}

interface HeldPort {
  readonly port: number;
  release(): Promise<void>;
}

/** A listener on a port the kernel picks, held until released. */
async function listenOnAnyPort(host: string): Promise<HeldPort> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('freePorts: no TCP address');
  return { port: address.port, release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
