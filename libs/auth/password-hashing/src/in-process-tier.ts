// The in-process password tier: bcrypt (native, on libuv threads) behind a bounded pool.
import type { PasswordTier } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier } from './bcrypt-password-verifier';
import { EmbeddedPasswordPool } from './embedded-password-pool';

export interface InProcessTierSettings {
  readonly bcryptCost: number;
  /** Stored hashes of a higher cost are refused (a planted hash cannot burn CPU). */
  readonly bcryptMaxVerifyCost: number;
  readonly passwordConcurrencyCount: number;
  readonly passwordQueueCount: number;
  readonly passwordTimeoutMs: number;
}

export function inProcessPasswordTier(settings: InProcessTierSettings): PasswordTier {
  const bcrypt = new BcryptPasswordVerifier({ cost: settings.bcryptCost, maxVerifyCost: settings.bcryptMaxVerifyCost });
  const pool = new EmbeddedPasswordPool(bcrypt, {
    maxConcurrent: settings.passwordConcurrencyCount,
    maxQueued: settings.passwordQueueCount,
    requestTimeoutMs: settings.passwordTimeoutMs,
  });
  return { verifier: pool, kind: 'in-process', close: () => pool.close() };
}
