import type { Identity } from './identity';
import type { Cancellation } from '@ward/platform/grpc-server';

/** One token type's check: the identity a token stands for, or undefined when it is invalid. */
export interface TokenVerifier {
  verify(token: string, signal?: Cancellation): Promise<(Identity & { readonly cached: boolean }) | undefined>;
  /** Drops any cached resolution of `token` (after the cluster said its revision is old). */
  forget(token: string): void;
}
