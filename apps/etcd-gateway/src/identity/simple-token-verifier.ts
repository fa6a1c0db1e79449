import { sealSimpleToken } from '@ward/auth/simple-tokens';
import type { Clock } from '@ward/shared/clock';
import type { Identity } from './identity';
import type { TokenVerifier } from './token-verifier';
import type { Cancellation } from '@ward/platform/grpc-server';

/** How a simple token is resolved: at the leader, which waits (bounded) for the token's index. */
export interface SimpleTokenLookup {
  /** `token` is in its sealed form (`sealSimpleToken`): the members never see a usable token. */
  resolveToken(token: string, signal?: Cancellation): Promise<{ valid: boolean; username: string; authRevision: number }>;
}

interface CacheEntry {
  readonly identity: Identity;
  readonly expiresAtMs: number;
}

/** Resolutions kept at most (oldest dropped first). */
export const MAX_CACHED_TOKENS_COUNT = 10_000;

/**
 * Simple tokens are state in the replicated log: resolved through the leader (so a token issued
 * through any gateway is known to every gateway — etcd issue 18437 cannot happen), and a
 * resolution is reused for at most `cacheMs` (≤ 1 s, the contract's bound). Malformed tokens are
 * refused without a round trip. The lookup gets the token's sealed form, the only form the
 * replicated state holds.
 */
export class SimpleTokenVerifier implements TokenVerifier {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly lookup: SimpleTokenLookup,
    private readonly clock: Clock,
    private readonly cacheMs: number,
  ) {
    if (!Number.isSafeInteger(cacheMs) || cacheMs < 0 || cacheMs > 1000) throw new TypeError('SimpleTokenVerifier: cacheMs must be in [0, 1000]');
  }

  async verify(token: string, signal?: Cancellation): Promise<(Identity & { cached: boolean }) | undefined> {
    // Only well-formed tokens are ever cached: a hit needs no sealing (a SHA-256) at all.
    const nowMs = this.clock.monotonicMs();
    const hit = this.cache.get(token);
    if (hit !== undefined && hit.expiresAtMs > nowMs) return { ...hit.identity, cached: true };
    if (hit !== undefined) this.cache.delete(token);
    const sealed = sealSimpleToken(token);
    if (sealed === undefined) return undefined;
    const answer = await this.lookup.resolveToken(sealed, signal);
    if (!answer.valid) return undefined;
    const identity = { username: answer.username, authRevision: answer.authRevision };
    if (this.cacheMs > 0) this.remember(token, identity, nowMs);
    return { ...identity, cached: false };
  }

  forget(token: string): void {
    this.cache.delete(token);
  }

  private remember(token: string, identity: Identity, nowMs: number): void {
    if (this.cache.size >= MAX_CACHED_TOKENS_COUNT) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(token, { identity, expiresAtMs: nowMs + this.cacheMs });
  }
}
