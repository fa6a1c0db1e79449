import type { RoleSpec, UserSpec } from '../auth-setup';
import type { CtlStep, Expectation } from '../scenario';

/** The setup etcd's own auth tests start from (spec §7 preamble): test-user/pass with test-role = READWRITE foo. */
export const TEST_ROLE: RoleSpec = { name: 'test-role', permissions: [{ permType: 'READWRITE', key: 'foo' }] };
export const TEST_USER: UserSpec = { name: 'test-user', password: 'pass', roles: ['test-role'] };
export const TEST_PASSWORDS = { 'test-user': 'pass' } as const;

export const DENIED = 'etcdserver: permission denied';
export const USER_EMPTY = 'etcdserver: user name is empty';
export const AUTH_FAILED = 'etcdserver: authentication failed, invalid user ID or password';
export const INVALID_MGMT = 'etcdserver: invalid auth management';

/** Shorthand for an etcdctl step. */
export function ctl(as: string | undefined, args: readonly string[], expect: Expectation, extra: Partial<CtlStep> = {}): CtlStep {
  return { ctl: args, as, expect, ...extra };
}

/** `etcdctl txn` stdin: compares, blank line, success ops, blank line, failure ops. */
export function txnInput(compares: readonly string[], success: readonly string[], failure: readonly string[]): string {
  return `${compares.join('\n')}\n\n${success.join('\n')}\n\n${failure.join('\n')}\n\n`;
}
