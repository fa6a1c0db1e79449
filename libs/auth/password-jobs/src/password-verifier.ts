/**
 * The password tier as the gateway sees it: bcrypt hashing and verification, wherever it runs
 * (in process on libuv threads, an embedded bounded pool, or BullMQ workers behind Redis).
 *
 * Passwords are byte strings, exactly as the client sent them (etcd's proto `string` fields are Go
 * strings: any bytes, valid UTF-8 or not, and etcd hands those bytes to bcrypt). Hashes are the
 * ASCII bytes of a modular-crypt bcrypt string (`$2b$10$…`, 60 bytes), the form etcd stores in
 * `authpb.User.password`.
 */
export interface PasswordVerifier {
  /**
   * Hashes `password` at the verifier's configured cost with a fresh salt.
   * The caller's bytes are not changed.
   * @throws PasswordError `ERR_AUTH_PASSWORD_TOO_LONG` when the password is over 72 bytes
   *   (etcd ≥ 3.5 with current x/crypto: `bcrypt: password length exceeds 72 bytes`), and the tier
   *   codes (`…_TIER_BUSY`, `…_TIER_TIMEOUT`, `…_TIER_FAILED`, `…_TIER_CLOSED`) on overload or failure.
   */
  hash(password: Uint8Array): Promise<Uint8Array>;

  /**
   * Whether `password` matches `hash`. As Go's `CompareHashAndPassword`, only the first 72 bytes of
   * the password count (so a 3.4-era user whose 80-byte password was silently truncated still
   * logs in with it). The caller's bytes are not changed.
   * @throws PasswordError `ERR_AUTH_PASSWORD_HASH_MALFORMED` when `hash` is not a bcrypt hash, and
   *   the tier codes on overload or failure.
   */
  verify(password: Uint8Array, hash: Uint8Array): Promise<boolean>;
}

/**
 * The same operations on bytes the callee may keep and zero (a worker that decrypted a job hands
 * over its own copy).
 */
export interface PasswordBytesVerifier {
  /** @throws PasswordError `ERR_AUTH_PASSWORD_TOO_LONG` above 72 bytes. */
  hashBytes(password: Uint8Array): Promise<Uint8Array>;
  /** Only the first 72 bytes count. @throws PasswordError `ERR_AUTH_PASSWORD_HASH_MALFORMED`. */
  verifyBytes(password: Uint8Array, hash: Uint8Array): Promise<boolean>;
}

/** A service's password tier: the verifier it checks passwords with, which kind it is, and its end. */
export interface PasswordTier {
  readonly verifier: PasswordVerifier;
  readonly kind: 'in-process' | 'queue';
  /** Whether the tier can answer now (absent: always); a service is not ready while it cannot. */
  readonly health?: () => PasswordTierHealth;
  close(): Promise<void>;
}

/** A tier's readiness, with the reason when it is not ready (no secret in it). */
export interface PasswordTierHealth {
  readonly ready: boolean;
  readonly reason?: string;
}
