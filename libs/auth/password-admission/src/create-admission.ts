// A service's admission control from its settings: throttle state and per-user slots in Redis for
// the BullMQ tier (shared by every service on it, kept across restarts), in process otherwise.
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import { createRedisConnection, type RedisConnectionOptions } from '@ward/platform/redis-queue';
import type { Clock } from '@ward/shared/clock';
import type { AuthAdmissionSettings } from './admission-options';
import { PasswordAdmission } from './password-admission';
import { RedisThrottleStore, RedisUserSlots } from './redis-stores';
import { MemoryThrottleStore, type ThrottleLimits } from './throttle';

export interface AuthAdmission {
  readonly admission: PasswordAdmission;
  readonly store: 'redis' | 'memory';
  close(): Promise<void>;
}

export async function createAuthAdmission(
  settings: AuthAdmissionSettings & { readonly passwordTimeoutMs: number; readonly passwordQueuePrefix: string },
  deps: {
    readonly logger: Logger;
    readonly clock: Clock;
    readonly metrics?: Metrics;
    /** The BullMQ tier's Redis (undefined: the in-process tier, state in memory). */
    readonly redis?: RedisConnectionOptions;
  },
): Promise<AuthAdmission> {
  const limits: ThrottleLimits = {
    freeFailures: settings.authThrottleFreeFailuresCount,
    addressFreeFailures: settings.authThrottleAddressFreeFailuresCount,
    baseDelayMs: settings.authThrottleBaseDelayMs,
    maxDelayMs: settings.authThrottleMaxDelayMs,
    forgetAfterMs: settings.authThrottleForgetMs,
  };
  const common = {
    maxInFlight: settings.authInFlightCount,
    queue: { maxQueued: settings.authQueueCount, maxQueuedPerUser: settings.authQueuePerUserCount, maxQueuedPerAddress: settings.authQueuePerAddressCount },
    queueTimeoutMs: settings.passwordTimeoutMs,
    maxDelayed: settings.authThrottleWaitingCount,
    refusalHoldMs: settings.authThrottleRefusalHoldMs,
    logger: deps.logger.child({ component: 'password-admission' }),
    ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
    nowMs: () => deps.clock.monotonicMs(),
  };
  if (deps.redis === undefined) {
    const admission = new PasswordAdmission({ ...common, throttle: new MemoryThrottleStore(limits, settings.authThrottleTrackedCount, () => deps.clock.monotonicMs()) });
    return { admission, store: 'memory', close: async () => admission.close() };
  }
  const redis = createRedisConnection(deps.redis, 'command');
  // Errors surface on the calls (fail fast while it reconnects); the event itself is expected.
  redis.on('error', () => undefined);
  // Ready before the first Authenticate (the tier itself was reachable a moment ago); if not, the
  // first checks fail fast and it keeps reconnecting.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(settings.authRedisTimeoutMs, 2000));
    redis.once('ready', () => (clearTimeout(timer), resolve()));
  });
  const options = { redis, prefix: settings.passwordQueuePrefix, timeoutMs: settings.authRedisTimeoutMs };
  const admission = new PasswordAdmission({
    ...common,
    throttle: new RedisThrottleStore(options, limits),
    userSlots: new RedisUserSlots({ ...options, perUser: settings.authUserInFlightCount, leaseMs: settings.passwordTimeoutMs }),
  });
  return {
    admission,
    store: 'redis',
    close: async () => {
      admission.close();
      redis.disconnect();
    },
  };
}
