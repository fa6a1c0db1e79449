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
export class CredentialChecker {
  private constructor(
    private readonly verifier: PasswordVerifier,
    private readonly dummyHash: Uint8Array,
  ) {}

  /** Hashes a random dummy password once through `verifier` (so at its configured cost). */
  static async create(verifier: PasswordVerifier): Promise<CredentialChecker> {
    const dummyPassword = randomBytes(32);
    try {
      return new CredentialChecker(verifier, await verifier.hash(dummyPassword));
    } finally {
      dummyPassword.fill(0);
    }
  }

  async check(password: Uint8Array, stored: StoredCredential): Promise<CredentialOutcome> {
    switch (stored.kind) {
      case 'no-password':
        return 'no-password-user';
      case 'unknown-user':
        await this.verifier.verify(password, this.dummyHash);
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
      await this.verifier.verify(password, this.dummyHash);
      return 'malformed-hash';
    }
  }
}
