// etcd's Authenticate rule (v3_server.go; spec §5), shared by the gateway and the token-service,
// off the Raft path: read the user and the auth revision R (linearizable), verify the password
// with bcrypt, then issue the token unless R moved — a password change or user delete raced the
// check — and retry if it did. A JWT is signed after reading R again. A simple token is assigned by
// a log entry carrying R, whose apply refuses it (AuthOldRevision, retried here) when a change was
// ordered before it (so no read before it), and R is read again after it (etcd's step d): a token
// issued across a change is never handed out, nor created. The
// plaintext password (the exact bytes the client sent) goes nowhere but bcrypt, and is not
// changed, so every round checks the same bytes.
import type { Logger } from '@ward/platform/logging';
import { isWireError, wireError } from '@ward/etcd/wire-errors';
import type { AuthCheck__Output } from '@ward/etcd/proto';
import type { IssuedToken, TokenIssuer } from './token-issuer';

/** What the auth store holds for the name being authenticated (password-hashing's StoredCredential). */
export type StoredCredential =
  | { readonly kind: 'password'; readonly hash: Uint8Array }
  | { readonly kind: 'no-password' }
  | { readonly kind: 'unknown-user' };

/**
 * The password step (password-hashing's CredentialChecker: bcrypt in process or through the BullMQ
 * tier, constant work for unknown users).
 */
export interface PasswordCheck {
  check(password: Uint8Array, stored: StoredCredential): Promise<'match' | 'mismatch' | 'no-password-user' | 'malformed-hash'>;
}

/** Test hooks: run at fixed points of the loop, so a race can be forced deterministically. */
export interface AuthenticateHooks {
  /** After the password matched the state read at `authRevision`, before anything else is read or issued. */
  readonly afterPasswordCheck?: (name: string, authRevision: number) => Promise<void>;
  /** Just before the token is issued (after the re-read confirmed `authRevision`, for a JWT). */
  readonly beforeTokenIssue?: (name: string, authRevision: number) => Promise<void>;
  /** After a token was issued, before the final revision check (simple tokens). */
  readonly afterTokenIssued?: (name: string, authRevision: number) => Promise<void>;
}

/**
 * Admission control in front of the password check (password-admission's PasswordAdmission): the
 * failure throttle, the fair queue and the in-flight bound, keyed by user name and client address.
 */
export interface AuthenticateAdmission {
  run<T>(
    key: { readonly user: string; readonly address: string },
    check: () => Promise<T>,
    classify: (result: { ok: true; value: T } | { ok: false; error: unknown }) => 'success' | 'failure' | 'neutral',
  ): Promise<T>;
}

export interface AuthenticatorOptions {
  readonly authCheck: (name: string, signal?: AbortSignal) => Promise<AuthCheck__Output>;
  readonly checker: PasswordCheck;
  readonly issuer: TokenIssuer;
  /** Rounds of the loop at most (each one bcrypt verification). */
  readonly maxAttemptsCount: number;
  readonly logger: Logger;
  readonly hooks?: AuthenticateHooks;
  /** Absent: no admission control (unit tests). */
  readonly admission?: AuthenticateAdmission;
}

/** What Authenticate produced; `authRevision` is the revision the password was checked at. */
export interface AuthenticateOutcome {
  readonly issued: IssuedToken;
  readonly authRevision: number;
  readonly attemptsCount: number;
}

function storedCredential(check: AuthCheck__Output): StoredCredential {
  if (!check.user_exists) return { kind: 'unknown-user' };
  if (check.no_password) return { kind: 'no-password' };
  return { kind: 'password', hash: check.password_hash };
}

function revisionOf(check: AuthCheck__Output): number {
  return Number(check.auth_revision);
}

export class Authenticator {
  constructor(private readonly options: AuthenticatorOptions) {
    if (!Number.isSafeInteger(options.maxAttemptsCount) || options.maxAttemptsCount < 1) {
      throw new TypeError('Authenticator: maxAttemptsCount must be a positive integer');
    }
  }

  /**
   * etcd's Authenticate for `name` from the client at `address` (throttled and queued by it): a
   * refused password counts as a failure, a token as a success, anything else (a timeout, a
   * refusal by admission control) as neither.
   */
  authenticate(name: string, password: Uint8Array, signal?: AbortSignal, address = ''): Promise<AuthenticateOutcome> {
    const admission = this.options.admission;
    if (admission === undefined) return this.rounds(name, password, signal);
    return admission.run({ user: name, address }, () => this.rounds(name, password, signal), (result) => {
      if (result.ok) return 'success';
      return isWireError(result.error, 'AuthFailed') ? 'failure' : 'neutral';
    });
  }

  private async rounds(name: string, password: Uint8Array, signal?: AbortSignal): Promise<AuthenticateOutcome> {
    const log = this.options.logger;
    for (let attempt = 1; attempt <= this.options.maxAttemptsCount; attempt++) {
      const outcome = await this.attempt(name, password, signal);
      if (outcome !== undefined) return { ...outcome, attemptsCount: attempt };
      log.info({ user: name, attempt }, 'revision when password checked became stale; retrying');
    }
    log.warn({ user: name, attempts: this.options.maxAttemptsCount }, 'authenticate gave up: the auth revision kept moving');
    throw wireError('Timeout');
  }

  /** One round: a token, or undefined when the auth revision moved (retry). */
  private async attempt(name: string, password: Uint8Array, signal?: AbortSignal): Promise<Omit<AuthenticateOutcome, 'attemptsCount'> | undefined> {
    const { authCheck, checker, issuer, hooks } = this.options;
    const check = await authCheck(name, signal);
    if (!check.auth_enabled) throw wireError('AuthNotEnabled');
    const authRevision = revisionOf(check);
    const outcome = await checker.check(password, storedCredential(check));
    if (outcome === 'no-password-user') throw wireError('NoPasswordUser');
    if (outcome === 'malformed-hash') this.options.logger.warn({ user: name }, 'stored password hash is unusable');
    if (outcome !== 'match') throw wireError('AuthFailed');
    await hooks?.afterPasswordCheck?.(name, authRevision);
    // Revision 0 (never in a store with auth enabled: its root user's creation moved it) is not
    // checked at apply: read again here as well.
    const checkedAtApply = issuer.revisionCheck === 'at-apply' && authRevision > 0;
    if (!checkedAtApply) {
      const recheck = await authCheck(name, signal);
      if (!recheck.auth_enabled) throw wireError('AuthNotEnabled');
      if (revisionOf(recheck) !== authRevision) return undefined;
    }
    await hooks?.beforeTokenIssue?.(name, authRevision);
    let issued: IssuedToken;
    try {
      issued = await issuer.issue(name, authRevision, signal);
    } catch (error) {
      // The simple token's entry applied after a change to the auth store: refused, check again.
      if (isWireError(error, 'AuthOldRevision')) return undefined;
      throw error;
    }
    if (issuer.revisionCheck === 'before-issue') return { issued, authRevision };
    await hooks?.afterTokenIssued?.(name, authRevision);
    const final = await authCheck(name, signal);
    return revisionOf(final) === authRevision ? { issued, authRevision } : undefined;
  }
}
