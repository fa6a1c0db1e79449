// The admission and throttle limits, named alike in every service that checks passwords
// (GATEWAY_AUTH_*, TOKEN_SERVICE_AUTH_*), with their defaults.
import { int } from '@ward/platform/config';
import { DEFAULT_THROTTLE_LIMITS } from './throttle';

export function authAdmissionOptions() {
  return {
    authInFlightCount: int({
      default: 4,
      min: 1,
      max: 1024,
      why: 'Authenticate password checks running at once in this service (in process: keep it at the password concurrency, so no check queues behind others in the pool); more wait in the fair queue',
    }),
    authQueueCount: int({ default: 128, min: 0, max: 100_000, why: "Authenticate checks waiting at most (served round-robin per user, then per client address); more get 'too many requests' at once" }),
    authQueuePerUserCount: int({ default: 16, min: 1, max: 100_000, why: "Authenticate checks of one user name waiting at most; more get 'too many requests'" }),
    authQueuePerAddressCount: int({ default: 32, min: 1, max: 100_000, why: "Authenticate checks from one client address waiting at most; more get 'too many requests'" }),
    authThrottleFreeFailuresCount: int({
      default: DEFAULT_THROTTLE_LIMITS.freeFailures,
      min: 0,
      max: 10_000,
      why: 'failed checks of a user, and of one user from one client address, before their checks are spaced out',
    }),
    authThrottleAddressFreeFailuresCount: int({
      default: DEFAULT_THROTTLE_LIMITS.addressFreeFailures,
      min: 0,
      max: 100_000,
      why: 'failed checks from one client address (any users) before its checks are spaced out (an address may be many people behind a NAT)',
    }),
    authThrottleBaseDelayMs: int({ default: DEFAULT_THROTTLE_LIMITS.baseDelayMs, min: 1, max: 60_000, why: 'spacing after the free failures; doubles with each further failure' }),
    authThrottleMaxDelayMs: int({
      default: DEFAULT_THROTTLE_LIMITS.maxDelayMs,
      min: 1,
      max: 600_000,
      why: "longest spacing; a user's login waits at most this (never refused), an address with more than this ahead gets 'too many requests'",
    }),
    authThrottleForgetMs: int({ default: DEFAULT_THROTTLE_LIMITS.forgetAfterMs, min: 1000, max: 86_400_000, why: 'failures are forgotten this long after the last one (a successful login resets the user at once)' }),
    authThrottleTrackedCount: int({ default: 100_000, min: 1, max: 10_000_000, why: 'users and addresses whose failures are remembered in process (in-process tier; the oldest are forgotten first)' }),
    authThrottleWaitingCount: int({ default: 1024, min: 1, max: 1_000_000, why: "callers waiting out a throttle delay (or a held refusal) at once; more get 'too many requests' at once" }),
    authThrottleRefusalHoldMs: int({
      default: 1000,
      min: 0,
      max: 60_000,
      why: "a throttled address's 'too many requests' is answered after this (0: at once), so a client looping on refusals cannot make a flood of them",
    }),
    authUserInFlightCount: int({ default: 4, min: 1, max: 1024, why: "BullMQ tier: checks of one user in flight over every service on the Redis; more get 'too many requests'" }),
    authRedisTimeoutMs: int({ default: 500, min: 10, max: 60_000, why: 'BullMQ tier: longest wait for the throttle state in Redis; an unreachable Redis fails Authenticate at once (unhealthy cluster)' }),
  };
}

/** The values of authAdmissionOptions(). */
export interface AuthAdmissionSettings {
  readonly authInFlightCount: number;
  readonly authQueueCount: number;
  readonly authQueuePerUserCount: number;
  readonly authQueuePerAddressCount: number;
  readonly authThrottleFreeFailuresCount: number;
  readonly authThrottleAddressFreeFailuresCount: number;
  readonly authThrottleBaseDelayMs: number;
  readonly authThrottleMaxDelayMs: number;
  readonly authThrottleForgetMs: number;
  readonly authThrottleTrackedCount: number;
  readonly authThrottleWaitingCount: number;
  readonly authThrottleRefusalHoldMs: number;
  readonly authUserInFlightCount: number;
  readonly authRedisTimeoutMs: number;
}

/** The client address of a grpc-js peer string (`1.2.3.4:5678`, `[::1]:5678`, `::1:5678`, a bare address). */
export function addressOfPeer(peer: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(peer);
  if (bracketed) return bracketed[1]!;
  const ipv4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?$/.exec(peer);
  if (ipv4) return ipv4[1]!;
  const lastColon = peer.lastIndexOf(':');
  return lastColon > 0 && /^\d+$/.test(peer.slice(lastColon + 1)) && peer.indexOf(':') !== lastColon ? peer.slice(0, lastColon) : peer;
}
