export { addressOfPeer, authAdmissionOptions, type AuthAdmissionSettings } from './admission-options';
export { createAuthAdmission, type AuthAdmission } from './create-admission';
export { FairQueue, type FairQueueLimits, type QueueRefusal } from './fair-queue';
export { PasswordAdmission, type AdmissionRefusal, type CheckOutcome, type PasswordAdmissionOptions, type UserSlots } from './password-admission';
export { RedisThrottleStore, RedisUnavailableError, RedisUserSlots, admissionKey, type RedisAdmissionOptions } from './redis-stores';
export {
  DEFAULT_THROTTLE_LIMITS,
  KEY_KINDS,
  keyName,
  MemoryThrottleStore,
  checkThrottleLimits,
  currentState,
  recordFailure,
  reserveSlot,
  throttleDelayMs,
  type CallerKey,
  type KeyKind,
  type Reservation,
  type ThrottleLimits,
  type ThrottleState,
  type ThrottleStore,
} from './throttle';
