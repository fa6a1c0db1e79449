// The TokenIssuer of Issue: a JWT signed with this replica's current key, carrying etcd's claims
// (username, revision, exp) plus iss, aud, iat, a random jti, and the key's kid in its header.
import { randomBytes } from 'node:crypto';
import type { IssuedToken, TokenIssuer } from '@ward/etcd/authenticate';
import { signIssuedToken } from '@ward/auth/tokens';
import { wireError } from '@ward/etcd/wire-errors';
import type { Clock } from '@ward/shared/clock';
import type { KeyRing, ScheduledKey } from './key-ring';

/** Random bytes in a jti (128 bits). */
const JWT_ID_BYTES = 16;

export interface JwtIssuerOptions {
  readonly ring: KeyRing;
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly issuer: string;
  readonly audience: string;
  /** Runs before a key signs (the key must be in the cluster's key directory first). */
  readonly beforeSign?: (key: ScheduledKey) => Promise<void>;
}

/** What the last signature was made with (for the Issue answer). */
export interface SignedToken {
  readonly token: string;
  readonly keyId: string;
  readonly expiresAtSeconds: number;
}

export class JwtIssuer implements TokenIssuer {
  readonly revisionCheck = 'before-issue';

  constructor(private readonly options: JwtIssuerOptions) {}

  async issue(name: string, authRevision: number): Promise<IssuedToken> {
    return { kind: 'token', token: (await this.sign(name, authRevision)).token };
  }

  async sign(name: string, authRevision: number): Promise<SignedToken> {
    const { ring, clock, ttlMs, issuer, audience } = this.options;
    let scheduled: ScheduledKey;
    try {
      scheduled = await ring.signingKey();
    } catch {
      // No key signs now (an operator's key was revoked): unavailable until another is configured.
      throw wireError('Unhealthy');
    }
    await this.options.beforeSign?.(scheduled);
    const nowMs = clock.nowMs();
    const expiresAtSeconds = Math.floor((nowMs + ttlMs) / 1000);
    const token = await signIssuedToken(scheduled.key, {
      username: name,
      revision: authRevision,
      issuer,
      audience,
      issuedAtSeconds: Math.floor(nowMs / 1000),
      expiresAtSeconds,
      jwtId: randomBytes(JWT_ID_BYTES).toString('base64url'),
    });
    return { token, keyId: scheduled.keyId, expiresAtSeconds };
  }
}
