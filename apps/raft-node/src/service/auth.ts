// AuthCheck (what Authenticate needs, read linearizably) and ResolveToken (simple tokens, after
// waiting until the issuing entry is applied here: what closes etcd issue 18437).
import { isAuthError } from '@ward/auth/permissions';
import type { AuthCheckRequest__Output, AuthCheckResponse, ResolveTokenRequest__Output, ResolveTokenResponse } from '@ward/etcd/proto';
import { wireError } from '@ward/etcd/wire-errors';
import { wireErrorAnswer } from './answers';
import { linearizableBarrier } from './read';
import { leaderMember, timeoutOf, type NodeCore } from './node-core';

const EMPTY = Buffer.alloc(0);

export async function authCheck(core: NodeCore, request: AuthCheckRequest__Output): Promise<AuthCheckResponse> {
  const failure = await linearizableBarrier(core, core.config.defaultRequestTimeoutMs);
  if (failure !== undefined) return { error: wireErrorAnswer(failure).error };
  const auth = core.stateMachine.applier.authView;
  const check = { auth_enabled: auth.enabled, user_exists: false, no_password: false, password_hash: EMPTY, auth_revision: String(auth.revision) };
  if (!auth.enabled) return { check };
  try {
    const input = auth.passwordCheckInput(request.name);
    return { check: { ...check, user_exists: true, password_hash: Buffer.from(input.passwordHash), auth_revision: String(input.authRevision) } };
  } catch (error) {
    if (isAuthError(error, 'ERR_AUTH_FAILED')) return { check };
    if (isAuthError(error, 'ERR_AUTH_NO_PASSWORD_USER')) return { check: { ...check, user_exists: true, no_password: true } };
    throw error;
  }
}

const TOKEN_INDEX = /^[0-9]{1,20}$/;

/**
 * etcd's simple-token `info`: `<prefix>.<index>` with a decimal uint64 index, else invalid at
 * once; then wait (bounded) until this member applied that index, then look the token up.
 */
export async function resolveToken(core: NodeCore, request: ResolveTokenRequest__Output): Promise<ResolveTokenResponse> {
  const answer = await resolve(core, request);
  // A use seen here slides the token's TTL on this member only, and the leader expires idle
  // tokens: a follower names the leader, so the caller resolves there next.
  const leader = core.driver.isLeader ? undefined : leaderMember(core);
  return leader === undefined ? answer : { ...answer, leader_address: leader.apiAddress };
}

async function resolve(core: NodeCore, request: ResolveTokenRequest__Output): Promise<ResolveTokenResponse> {
  const invalid: ResolveTokenResponse = { valid: false, username: '', auth_revision: '0' };
  const parts = request.token.split('.');
  if (parts.length !== 2 || !TOKEN_INDEX.test(parts[1]!) || BigInt(parts[1]!) >= 2n ** 64n) return invalid;
  const index = Number(parts[1]);
  // A leader holds every committed entry (leader completeness), and a token is handed out only once
  // its entry applied: an index beyond the leader's log names no token, now or later (a later
  // entry at that index would carry another sealed prefix). Answer at once rather than let such
  // tokens hold the waiting slots linearizable reads share.
  if (core.driver.isLeader && index > core.raftIndexes().last) return invalid;
  if (!core.applied.hasRoom()) throw wireError('TooManyRequests');
  // A follower may not have the entry yet: it waits, bounded, for its applied index to get there.
  const reached = await core.applied.wait(Number.isSafeInteger(index) ? index : Number.POSITIVE_INFINITY, timeoutOf(core, request.timeout_ms));
  if (!reached) return invalid;
  const owner = core.stateMachine.applier.resolveSimpleToken(request.token);
  if (owner === undefined) return invalid;
  core.tokens.touch(request.token, core.clock.monotonicMs());
  return { valid: true, username: owner.username, auth_revision: String(owner.authRevision) };
}
