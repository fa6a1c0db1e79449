import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Most ports one call may ask for; a test needing more is doing something else. */
const MAX_PORTS_PER_CALL = 64;

/** Lowest port handed out: below it are the well-known ports and the usual fixed ones of services. */
const LOWEST_PORT = 10_000;
/** Ports tried (taken ones are skipped) before giving up on one. */
const ATTEMPTS_PER_PORT = 64;

/**
 * `count` distinct TCP ports on `host` that were free a moment ago: picked at random below the
 * kernel's ephemeral range (where it picks the local port of every outgoing connection, so a port
 * it handed out could be taken by any client socket before the caller binds it), each checked by a
 * listener, the listeners held open together, then closed again. Another test process may still
 * pick the same port in that window (one chance in some 20,000 per port); the cluster starters
 * retry a start that fails on an address in use.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const held = await reservePorts(count, host);
  await Promise.all(held.map((listener) => listener.release()));
  return held.map((listener) => listener.port);
}

/**
 * `count` distinct ports as freePorts picks them, still held: each stays bound until its `release`,
 * which the caller runs right before binding it. For a port that must be known long before it is
 * bound (written into another process's settings first), so that no other test can pick it meanwhile.
 */
export async function reservePorts(count: number, host = '127.0.0.1'): Promise<HeldPort[]> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_PORTS_PER_CALL) {
    throw new RangeError(`free ports: count must be 1..${MAX_PORTS_PER_CALL}, got ${count}`);
  }
  const range = portsOutsideEphemeralRange();
  const listeners: HeldPort[] = [];
  try {
    for (let i = 0; i < count; i++) listeners.push(await listenOnUnusedPort(host, range, new Set(listeners.map((l) => l.port))));
  } catch (error) {
    await Promise.all(listeners.map((listener) => listener.release()));
    throw error;
  }
  return listeners;
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

export interface HeldPort {
  readonly port: number;
  release(): Promise<void>;
}

/** The ports the kernel never picks for an outgoing connection: [LOWEST_PORT, start of its ephemeral range). */
function portsOutsideEphemeralRange(): { low: number; high: number } {
  let ephemeralLow = 32_768;
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low! > LOWEST_PORT + 1_000) ephemeralLow = low!;
  } catch {
    // not Linux: the IANA dynamic range starts at 49152, but 32768 is below every usual start
  }
  return { low: LOWEST_PORT, high: ephemeralLow - 1 };
}

/** A listener on a random port in [low, high] (outside the ephemeral range), not in `skip`, held until released. */
async function listenOnUnusedPort(host: string, { low, high }: { low: number; high: number }, skip: ReadonlySet<number>): Promise<HeldPort> {
  for (let attempt = 0; attempt < ATTEMPTS_PER_PORT; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (skip.has(port)) continue;
    try {
      return await listenOn(host, port);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  throw new Error(`freePorts: no free port in ${ATTEMPTS_PER_PORT} attempts between ${low} and ${high}`);
}

/** A listener on a port the kernel picks, held until released. */
function listenOnAnyPort(host: string): Promise<HeldPort> {
  return listenOn(host, 0);
}

async function listenOn(host: string, port: number): Promise<HeldPort> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('freePorts: no TCP address');
  return { port: address.port, release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
