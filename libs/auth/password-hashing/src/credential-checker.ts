import { randomBytes } from 'node:crypto';
import { PasswordError, type PasswordVerifier } from '@ward/auth/password-jobs';

/** What the auth store holds for the name being authenticated. */
export type StoredCredential =
  | { readonly kind: 'password'; readonly hash: Uint8Array }
  | { readonly kind: 'no-password' }
  | { readonly kind: 'unknown-user' };

/**
 * - `match`: issue a token.
 * - `mismatch`: etcd's ErrAuthFailed (also for unknown users: indistinguishable by text and time).
 * - `no-password-user`: etcd's ErrNoPasswordUser (Unknown code; etcd answers it before bcrypt, and
 *   its distinct text already tells the user exists).
 * - `malformed-hash`: the stored hash is unusable (or above the cost limit); answer ErrAuthFailed
 *   as etcd does, and log it: it means corrupt or hostile data.
 */
export type CredentialOutcome = 'match' | 'mismatch' | 'no-password-user' | 'malformed-hash';

/**
 * The password step of Authenticate (etcd's CheckPassword) over any PasswordVerifier, so that the
 * answer's timing does not reveal whether a user exists: an unknown user, and a malformed stored
 * hash, cost one bcrypt verification against a dummy hash made at the verifier's cost.
 */
/** Failures of the tier itself (as opposed to the password or the hash). */
const TIER_CODES: ReadonlySet<PasswordError['code']> = new Set(['ERR_AUTH_PASSWORD_TIER_BUSY', 'ERR_AUTH_PASSWORD_TIER_TIMEOUT', 'ERR_AUTH_PASSWORD_TIER_FAILED', 'ERR_AUTH_PASSWORD_TIER_CLOSED']);

export class CredentialChecker {
  /** The dummy hash, once made; a failed attempt (the tier was down) is made again when needed. */
  private dummyHash: Promise<Uint8Array> | undefined;

  private constructor(private readonly verifier: PasswordVerifier) {}

  /**
   * Hashes a random dummy password through `verifier` (so at its configured cost). A tier that
   * cannot answer yet (e.g. its Redis is down at boot) does not fail this: the dummy is hashed on
   * the first check that needs it, and until then that check fails with the tier's error.
   */
  static async create(verifier: PasswordVerifier): Promise<CredentialChecker> {
    const checker = new CredentialChecker(verifier);
    await checker.dummy().catch((error: unknown) => {
      if (!(error instanceof PasswordError) || !TIER_CODES.has(error.code)) throw error;
    });
    return checker;
  }

  private dummy(): Promise<Uint8Array> {
    if (this.dummyHash === undefined) {
      const dummyPassword = randomBytes(32);
      const hashing = this.verifier.hash(dummyPassword).finally(() => dummyPassword.fill(0));
      this.dummyHash = hashing;
      hashing.catch(() => {
        if (this.dummyHash === hashing) this.dummyHash = undefined;
      });
    }
    return this.dummyHash;
  }

  async check(password: Uint8Array, stored: StoredCredential): Promise<CredentialOutcome> {
    switch (stored.kind) {
      case 'no-password':
        return 'no-password-user';
      case 'unknown-user':
        await this.verifier.verify(password, await this.dummy());
        return 'mismatch';
      case 'password':
        return this.checkHash(password, stored.hash);
    }
  }

  private async checkHash(password: Uint8Array, hash: Uint8Array): Promise<CredentialOutcome> {
    try {
      return (await this.verifier.verify(password, hash)) ? 'match' : 'mismatch';
    } catch (error) {
      if (!(error instanceof PasswordError) || error.code !== 'ERR_AUTH_PASSWORD_HASH_MALFORMED') throw error;
      await this.verifier.verify(password, await this.dummy());
      return 'malformed-hash';
    }
  }
}
