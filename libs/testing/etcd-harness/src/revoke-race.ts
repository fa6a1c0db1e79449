import { resetTarget, setupAuth } from './auth-setup';
import { waitUntil } from './wait-until';
import { EtcdGrpcClient, type GrpcOutcome } from './grpc-client';
import type { Target } from './target';

/** One write attempt of the race, as the client saw it. */
export interface RaceWrite {
  readonly key: string;
  /** 'ok' with the put's revision, 'refused' with an etcd error, 'unknown' when the outcome is ambiguous (deadline, connection). */
  readonly result: 'ok' | 'refused' | 'unknown';
  readonly revision?: number;
  readonly code?: number;
  readonly details?: string;
}

/** Everything the checker needs: the writes, the revoke's revision and what the store holds afterwards. */
export interface RaceHistory {
  readonly writes: readonly RaceWrite[];
  /** KV revision in the header of the revoking call: every later write is ordered after it. */
  readonly revokeRevision: number;
  /** key -> mod_revision of every key under the race prefix after the race. */
  readonly stored: ReadonlyMap<string, number>;
}

/**
 * Lists violations of "no write ordered after the revoke succeeds":
 * - a write acknowledged with a revision above the revoke's;
 * - a stored key whose revision is above the revoke's;
 * - a stored key whose write was refused (a refused write must not be applied);
 * - an acknowledged write missing from the store, or stored at a different revision.
 */
export function checkRaceHistory(history: RaceHistory): string[] {
  const violations: string[] = [];
  const byKey = new Map(history.writes.map((write) => [write.key, write]));
  for (const write of history.writes) {
    if (write.result !== 'ok') continue;
    if ((write.revision ?? 0) > history.revokeRevision) {
      violations.push(`${write.key} acknowledged at revision ${write.revision} after the revoke at ${history.revokeRevision}`);
    }
    const stored = history.stored.get(write.key);
    if (stored === undefined) violations.push(`${write.key} acknowledged but not stored`);
    else if (stored !== write.revision) violations.push(`${write.key} acknowledged at ${write.revision} but stored at ${stored}`);
  }
  for (const [key, revision] of history.stored) {
    if (revision > history.revokeRevision) violations.push(`${key} stored at revision ${revision} after the revoke at ${history.revokeRevision}`);
    if (byKey.get(key)?.result === 'refused') violations.push(`${key} was refused but is stored`);
  }
  return violations;
}

/** How the revoke is done (each bumps the auth revision in etcd's semantics). */
export type RevokeKind = 'user-revoke-role' | 'role-revoke-permission' | 'role-delete' | 'user-delete';

export interface RevokeRaceOptions {
  readonly kind: RevokeKind;
  readonly writers?: number;
  /** Writing time before the revoke (counted from the first acknowledged write), and after it. */
  readonly beforeMs?: number;
  readonly afterMs?: number;
}

export interface RevokeRaceResult extends RaceHistory {
  readonly acknowledgedBefore: number;
  /** Puts and logins the writers started after the revoke was acknowledged. */
  readonly attemptedAfter: number;
}

const PREFIX = 'race/';
const FIRST_WRITE_LIMIT_MS = 30_000;
const USER = { name: 'racer', password: 'racer-pw' } as const;
const RETRYABLE = new Set(['etcdserver: revision of auth store is old', 'etcdserver: invalid auth token']);

function revisionOf(response: unknown): number {
  return Number((response as { header: { revision: string } }).header.revision);
}

/**
 * Writers put distinct keys in a loop as a user holding READWRITE on `race/`, while root revokes
 * that right; then the store is read back. Like etcd's Go client, a writer re-authenticates on
 * `invalid auth token` or `revision of auth store is old`.
 */
export async function runRevokeRace(target: Target, options: RevokeRaceOptions): Promise<RevokeRaceResult> {
  const admin = new EtcdGrpcClient(target.clientEndpoint);
  const writers = Array.from({ length: options.writers ?? 4 }, () => new EtcdGrpcClient(target.clientEndpoint));
  try {
    await resetTarget(admin);
    const rootToken = (await setupAuth(admin, {
      roles: [{ name: 'race-role', permissions: [{ permType: 'READWRITE', key: PREFIX, rangeEnd: 'race0' }] }],
      users: [{ ...USER, roles: ['race-role'] }],
    })) as string;
    const writes: RaceWrite[] = [];
    let stop = false;
    let revoked = false;
    let attemptedAfter = 0;
    const loops = writers.map(async (client, writer) => {
      let token: string | undefined = await client.authenticate(USER.name, USER.password);
      for (let sequence = 0; !stop; sequence++) {
        if (token === undefined) {
          // A deleted user cannot log in again; keep trying (a real client would) without writing.
          if (revoked) attemptedAfter += 1;
          const again = await client.call<{ token: string }>('Auth', 'Authenticate', USER);
          token = again.ok ? again.response.token : undefined;
          if (token === undefined) await new Promise((done) => setTimeout(done, 20));
          continue;
        }
        const key = `${PREFIX}${writer}/${sequence}`;
        const afterRevoke = revoked;
        const outcome = await client.call('KV', 'Put', { key: Buffer.from(key), value: Buffer.from(String(sequence)) }, { token, deadlineMs: 10_000 });
        if (afterRevoke) attemptedAfter += 1;
        writes.push(classify(key, outcome));
        if (!outcome.ok && RETRYABLE.has(outcome.details)) token = undefined;
      }
    });
    // Logins can take a while (bcrypt through the BullMQ tier, a loaded machine): the writing
    // time before the revoke starts with the first acknowledged write.
    await waitUntil('a first acknowledged write', () => writes.some((write) => write.result === 'ok'), FIRST_WRITE_LIMIT_MS, 10);
    await new Promise((done) => setTimeout(done, options.beforeMs ?? 1000));
    const acknowledgedBefore = writes.filter((write) => write.result === 'ok').length;
    const revoke = await revokeCall(admin, options.kind, rootToken);
    if (!revoke.ok) throw new Error(`revoke ${options.kind} failed: ${revoke.code} ${revoke.details}`);
    revoked = true;
    await new Promise((done) => setTimeout(done, options.afterMs ?? 1000));
    stop = true;
    await Promise.all(loops);
    return { writes, revokeRevision: revisionOf(revoke.response), stored: await storedKeys(admin, rootToken), acknowledgedBefore, attemptedAfter };
  } finally {
    admin.close();
    for (const client of writers) client.close();
  }
}

function classify(key: string, outcome: GrpcOutcome): RaceWrite {
  if (outcome.ok) return { key, result: 'ok', revision: revisionOf(outcome.response) };
  // Deadline, unavailable, cancelled: the write may or may not have been applied.
  const ambiguous = outcome.code === 4 || outcome.code === 14 || outcome.code === 1 || outcome.code === 2;
  return { key, result: ambiguous ? 'unknown' : 'refused', code: outcome.code, details: outcome.details };
}

function revokeCall(admin: EtcdGrpcClient, kind: RevokeKind, token: string): Promise<GrpcOutcome> {
  switch (kind) {
    case 'user-revoke-role':
      return admin.call('Auth', 'UserRevokeRole', { name: USER.name, role: 'race-role' }, { token });
    case 'role-revoke-permission':
      return admin.call('Auth', 'RoleRevokePermission', { role: 'race-role', key: Buffer.from(PREFIX), range_end: Buffer.from('race0') }, { token });
    case 'role-delete':
      return admin.call('Auth', 'RoleDelete', { role: 'race-role' }, { token });
    case 'user-delete':
      return admin.call('Auth', 'UserDelete', { name: USER.name }, { token });
  }
}

async function storedKeys(admin: EtcdGrpcClient, token: string): Promise<Map<string, number>> {
  const range = await admin.call<{ kvs: { key: Buffer; mod_revision: string }[] }>(
    'KV',
    'Range',
    { key: Buffer.from(PREFIX), range_end: Buffer.from('race0') },
    { token },
  );
  if (!range.ok) throw new Error(`reading the race keys failed: ${range.code} ${range.details}`);
  return new Map(range.response.kvs.map((kv) => [kv.key.toString('utf8'), Number(kv.mod_revision)]));
}

