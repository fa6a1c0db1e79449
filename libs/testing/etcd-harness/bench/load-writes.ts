// The writes the load benches share (bulk-load, scale): txns of puts from several clients, a txn
// that fails tried again.
import { EtcdGrpcClient } from '../src/index';

/** Tries of one txn before the run gives up. */
export const TXN_TRIES = 5;
/** Clients writing at once, and puts per txn (as the scale bench has always loaded). */
export const LOAD_CLIENTS = 8;
export const PUTS_PER_TXN = 128;

/** The key the load benches write at position `i`: `scale/<9 digits>`. */
export const loadKey = (i: number): Buffer => Buffer.from(`scale/${String(i).padStart(9, '0')}`);

/**
 * Sends one Txn of `success` ops, trying again after an error (etcd answers `request timed out`
 * under a heavy load) at most TXN_TRIES times, 200 ms × the try between; throws naming `what` when
 * the last try fails. Returns how many tries failed before the one that went through.
 */
export async function txnWithRetries(client: EtcdGrpcClient, success: readonly unknown[], what: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await client.call('KV', 'Txn', { success }, { deadlineMs: 60_000 });
    if (outcome.ok) return attempt - 1;
    if (attempt === TXN_TRIES) throw new Error(`${what} failed: ${outcome.code} ${outcome.details}`);
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

/** Writes keys [from, to) with `value` in txns of PUTS_PER_TXN from LOAD_CLIENTS clients; returns the seconds taken. */
export async function writeKeys(endpoint: string, from: number, to: number, value: Buffer): Promise<number> {
  const clients = Array.from({ length: LOAD_CLIENTS }, () => new EtcdGrpcClient(endpoint));
  let next = from;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (next < to) {
          const first = next;
          next = Math.min(to, next + PUTS_PER_TXN);
          const success = [];
          for (let i = first; i < next; i++) success.push({ request_put: { key: loadKey(i), value } });
          await txnWithRetries(client, success, `txn at key ${first}`);
        }
      }),
    );
  } finally {
    for (const client of clients) client.close();
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}
