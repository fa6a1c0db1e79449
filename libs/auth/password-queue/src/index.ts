export {
  MAX_SEALING_KEYS,
  SEALING_KEY_BYTES,
  PayloadSealer,
  generateSealingKeyEntry,
  newRequestId,
  parseSealingKeys,
  type SealDirection,
  type SealedMessage,
  type SealingKey,
} from './payload-sealer';
export { createPasswordJobProcessor, type PasswordJobProcessorOptions } from './password-job-processor';
export { QueuePasswordVerifier, errorFromFailure, type QueuePasswordVerifierOptions } from './queue-password-verifier';
export { REDIS_PROBE_INTERVAL_MS, createPasswordTier, createQueueTierVerifier, redisConnectionFromUrl, redisReachable, type PasswordTierSettings, type QueueTierOptions } from './queue-tier';
export { passwordTierOptions } from './tier-options';
export { RedisWatchedVerifier, type ClosableVerifier, type RedisWatchedVerifierOptions } from './redis-watched-verifier';
