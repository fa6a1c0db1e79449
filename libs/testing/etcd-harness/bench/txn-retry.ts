import type { EtcdGrpcClient } from '../src/index';

/** Tries of one txn in the load benches before the run gives up. */
export const TXN_TRIES = 5;

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
