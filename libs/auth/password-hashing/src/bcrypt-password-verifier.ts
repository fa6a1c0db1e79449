import { createRequire } from 'node:module';
import {
  BCRYPT_DEFAULT_COST,
  PasswordError,
  assertBcryptCost,
  bcryptHashCost,
  checkHashablePassword,
  passwordBytesForHashing,
  passwordBytesForVerifying,
  truncatePasswordForVerifying,
  type PasswordBytesVerifier,
  type PasswordVerifier,
} from '@ward/auth/password-jobs';

/** The parts of the native `bcrypt` package (v6, which ships no types) used here. */
interface BcryptModule {
  /** A salt `$2<minor>$<cost>$<22 chars>`, made on the libuv threadpool. */
  genSalt(rounds: number, minor: 'a' | 'b'): Promise<string>;
  /** bcrypt of `data`'s bytes (NULs included) with `salt`, on the libuv threadpool. */
  hash(data: Buffer, salt: string): Promise<string>;
  /** Constant-time comparison of bcrypt(data) with `encrypted`, on the libuv threadpool. */
  compare(data: Buffer, encrypted: string): Promise<boolean>;
}

// A CommonJS native addon: loaded with require, typed by the interface above.
const bcrypt = createRequire(import.meta.url)('bcrypt') as BcryptModule;

export interface BcryptPasswordVerifierOptions {
  /** log2 rounds for new hashes: 4..31, etcd's default 10. Out of range fails construction. */
  readonly cost: number;
  /**
   * Stored hashes with a higher cost are refused (HASH_MALFORMED, reason `cost-above-limit`)
   * instead of tying up a libuv thread for minutes: each cost step doubles the time, and a root
   * user can store a pre-made hash (etcd's UserAdd `hashedPassword`). At least `cost`.
   */
  readonly maxVerifyCost: number;
}

/** Default refusal threshold: cost 16 is ~64× cost 10 (several seconds per check). */
export const DEFAULT_MAX_VERIFY_COST = 16;

/**
 * bcrypt in process with the native `bcrypt` package: every hash and compare runs asynchronously on
 * a libuv threadpool thread (UV_THREADPOOL_SIZE, default 4), never on the event loop. New hashes
 * are version 2b; 2a (Go's x/crypto, what etcd writes) and 2y verify too.
 */
export class BcryptPasswordVerifier implements PasswordVerifier, PasswordBytesVerifier {
  readonly cost: number;
  readonly maxVerifyCost: number;

  constructor(options: Partial<BcryptPasswordVerifierOptions> = {}) {
    this.cost = options.cost ?? BCRYPT_DEFAULT_COST;
    this.maxVerifyCost = options.maxVerifyCost ?? Math.max(DEFAULT_MAX_VERIFY_COST, this.cost);
    assertBcryptCost(this.cost, 'BcryptPasswordVerifier cost');
    assertBcryptCost(this.maxVerifyCost, 'BcryptPasswordVerifier maxVerifyCost');
    if (this.maxVerifyCost < this.cost) {
      throw new TypeError(`BcryptPasswordVerifier: maxVerifyCost ${this.maxVerifyCost} is below cost ${this.cost}`);
    }
  }

  async hash(password: Uint8Array): Promise<Uint8Array> {
    const copy = passwordBytesForHashing(password);
    try {
      return await this.hashBytes(copy);
    } finally {
      copy.fill(0);
    }
  }

  async verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    const copy = passwordBytesForVerifying(password);
    try {
      return await this.verifyBytes(copy, hash);
    } finally {
      copy.fill(0);
    }
  }

  async hashBytes(password: Uint8Array): Promise<Uint8Array> {
    const key = Buffer.from(checkHashablePassword(password));
    try {
      const salt = await bcrypt.genSalt(this.cost, 'b');
      const hash = await bcrypt.hash(key, salt);
      return new Uint8Array(Buffer.from(hash, 'latin1'));
    } finally {
      key.fill(0);
    }
  }

  async verifyBytes(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    const cost = bcryptHashCost(hash);
    if (cost === undefined) throw new PasswordError('ERR_AUTH_PASSWORD_HASH_MALFORMED', { reason: 'not-bcrypt' });
    if (cost > this.maxVerifyCost) {
      throw new PasswordError('ERR_AUTH_PASSWORD_HASH_MALFORMED', { reason: 'cost-above-limit', limit: this.maxVerifyCost });
    }
    const key = Buffer.from(truncatePasswordForVerifying(password));
    try {
      return await bcrypt.compare(key, Buffer.from(hash).toString('latin1'));
    } finally {
      key.fill(0);
    }
  }
}
