import { createServer } from 'node:net';

/** Most ports one call may ask for; a test needing more is doing something else. */
const MAX_PORTS_PER_CALL = 64;

/**
 * Returns `count` distinct TCP ports on 127.0.0.1 that were free a moment ago (the kernel picked
 * them for listeners that are closed again). Another process may still take one before the
 * caller binds it; the window is short and tests retry a failed start on fresh ports.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_PORTS_PER_CALL) {
    throw new RangeError(`findFreePorts: count must be 1..${MAX_PORTS_PER_CALL}, got ${count}`);
  }
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      return new Promise<ReturnType<typeof createServer>>((resolvePromise, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolvePromise(server));
      });
    }),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('findFreePorts: no TCP address');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
  return ports;
}
