import { wireError } from '@ward/etcd/wire-errors';
import { ANONYMOUS, type ResolvedIdentity } from './identity';
import { MAX_TOKEN_LENGTH_CHARS } from './token-extraction';
import type { TokenVerifier } from './token-verifier';

/** Whether auth is enabled right now (a linearizable read at the cluster). */
export interface AuthEnabledProbe {
  authEnabled(signal?: AbortSignal): Promise<boolean>;
}

const ANONYMOUS_IDENTITY: ResolvedIdentity = Object.freeze({ ...ANONYMOUS, cached: false });

/**
 * etcd's AuthInfoFromCtx, as 3.7 behaves: no token → no identity; a valid token → its identity;
 * an invalid token → `invalid auth token` — unless auth is disabled, when tokens are ignored.
 * The enabled flag is asked for (linearizably) only when a token fails, and never cached: right
 * after AuthEnable an invalid token must already be refused. Tokens sent while auth is disabled
 * are rare (clients get no token then), so the extra read costs little.
 */
export class IdentityResolver {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly probe: AuthEnabledProbe,
  ) {}

  async identify(token: string | undefined, signal?: AbortSignal): Promise<ResolvedIdentity> {
    if (token === undefined) return ANONYMOUS_IDENTITY;
    const identity = token.length <= MAX_TOKEN_LENGTH_CHARS ? await this.verifier.verify(token, signal) : undefined;
    if (identity !== undefined) return identity;
    if (!(await this.probe.authEnabled(signal))) return ANONYMOUS_IDENTITY;
    throw wireError('InvalidAuthToken');
  }

  /** The cluster said the identity's revision is old: resolve the token afresh next time. */
  forget(token: string | undefined): void {
    if (token !== undefined) this.verifier.forget(token);
  }
}
