import { wireError } from '@ward/etcd/wire-errors';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import type { Cancellation } from '@ward/platform/grpc-server';

/** Whether auth is enabled now (linearizable). */
export type AuthEnabledCheck = (signal?: Cancellation) => Promise<boolean>;

/**
 * etcd 3.7's "authenticated" rule for the RPCs it answers outside the log (Status, MemberList,
 * Alarm GET): while auth is enabled a valid token must be present, else `user name is empty`.
 * This says who is asking, not what they may do — no permission is decided here.
 */
export async function requireAuthenticated(
  executor: RequestExecutor,
  authEnabled: AuthEnabledCheck,
  credentials: Credentials,
  signal?: Cancellation,
): Promise<void> {
  const identity = await executor.identify(credentials, signal);
  if (identity.username !== '') return;
  if (await authEnabled(signal)) throw wireError('UserEmpty');
}
