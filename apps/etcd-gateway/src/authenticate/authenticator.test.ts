// The Authenticate loop with real bcrypt (cost 4) against an in-memory auth state standing in for
// the cluster's linearizable AuthCheck, and the test hooks forcing the password-change race.
import { beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { BcryptPasswordVerifier, CredentialChecker } from '@ward/auth/password-hashing';
import { createLogger } from '@ward/platform/logging';
import { isWireError, wireError } from '@ward/etcd/wire-errors';
import type { AuthCheck__Output } from '@ward/etcd/proto';
import { Authenticator, type AuthenticateHooks, type IssuedToken, type RevisionCheck, type TokenIssuer } from '@ward/etcd/authenticate';

const bcrypt = new BcryptPasswordVerifier({ cost: 4 });
let checker: CredentialChecker;
beforeAll(async () => {
  checker = await CredentialChecker.create(bcrypt);
});

/** The auth store as AuthCheck sees it. */
class AuthState {
  enabled = true;
  revision = 5;
  readonly users = new Map<string, { hash?: Uint8Array; noPassword?: boolean }>();
  reads = 0;

  async setPassword(name: string, password: string): Promise<void> {
    this.users.set(name, { hash: await bcrypt.hash(utf8(password)) });
    this.revision += 1;
  }

  check = async (name: string): Promise<AuthCheck__Output> => {
    this.reads += 1;
    const user = this.users.get(name);
    return {
      auth_enabled: this.enabled,
      user_exists: user !== undefined,
      no_password: user?.noPassword === true,
      password_hash: Buffer.from(user?.hash ?? new Uint8Array(0)),
      auth_revision: String(this.revision),
    };
  };
}

class RecordingIssuer implements TokenIssuer {
  readonly issued: Array<{ name: string; authRevision: number }> = [];
  constructor(readonly revisionCheck: RevisionCheck) {}
  async issue(name: string, authRevision: number): Promise<IssuedToken> {
    this.issued.push({ name, authRevision });
    return { kind: 'token', token: `token-${name}-${authRevision}-${this.issued.length}` };
  }
}

const logger = createLogger({ name: 'test', level: 'silent' });

function authenticator(state: AuthState, issuer: TokenIssuer, hooks?: AuthenticateHooks, maxAttemptsCount = 5): Authenticator {
  return new Authenticator({ authCheck: state.check, checker, issuer, maxAttemptsCount, logger, hooks });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => ({ unexpected: value }),
    (error: unknown) => error,
  );
}

describe('Authenticator', () => {
  it('issues a token at the revision the password was checked at', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    const issuer = new RecordingIssuer('before-issue');
    const outcome = await authenticator(state, issuer).authenticate('alice', utf8('secret'));
    expect(outcome.issued).toEqual({ kind: 'token', token: 'token-alice-6-1' });
    expect(outcome.authRevision).toBe(6);
    expect(outcome.attemptsCount).toBe(1);
  });

  it.each([
    ['a wrong password', 'alice', 'nope'],
    ['an unknown user', 'mallory', 'secret'],
    ['an empty user name', '', 'secret'],
  ])('answers %s with etcd ErrAuthFailed, issuing nothing', async (_case, name, password) => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    const issuer = new RecordingIssuer('before-issue');
    const error = await failure(authenticator(state, issuer).authenticate(name, utf8(password)));
    expect(isWireError(error, 'AuthFailed')).toBe(true);
    expect((error as Error).message).toBe('etcdserver: authentication failed, invalid user ID or password');
    expect(issuer.issued).toHaveLength(0);
  });

  it('a no-password user: Unknown `auth: ... no password user`, whatever the password', async () => {
    const state = new AuthState();
    state.users.set('svc', { noPassword: true });
    const error = await failure(authenticator(state, new RecordingIssuer('before-issue')).authenticate('svc', utf8('')));
    expect(isWireError(error, 'NoPasswordUser')).toBe(true);
    expect((error as { grpcCode: number }).grpcCode).toBe(2);
  });

  it('auth disabled: authentication is not enabled', async () => {
    const state = new AuthState();
    state.enabled = false;
    await state.setPassword('alice', 'secret');
    expect(isWireError(await failure(authenticator(state, new RecordingIssuer('before-issue')).authenticate('alice', utf8('secret'))), 'AuthNotEnabled')).toBe(true);
  });

  it('race: the password changes after it was checked — the old password never yields a token', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'old-password');
    const issuer = new RecordingIssuer('before-issue');
    let fired = false;
    const hooks: AuthenticateHooks = {
      afterPasswordCheck: async () => {
        if (fired) return;
        fired = true;
        await state.setPassword('alice', 'new-password');
      },
    };
    const error = await failure(authenticator(state, issuer, hooks).authenticate('alice', utf8('old-password')));
    expect(fired).toBe(true);
    expect(isWireError(error, 'AuthFailed')).toBe(true);
    expect(issuer.issued).toHaveLength(0);
  });

  it('race after issuing a simple token: a change applied before the token is found, the token is withheld', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'old-password');
    const issuer = new RecordingIssuer('at-apply');
    let fired = false;
    const hooks: AuthenticateHooks = {
      afterTokenIssued: async () => {
        if (fired) return;
        fired = true;
        await state.setPassword('alice', 'new-password');
      },
    };
    const error = await failure(authenticator(state, issuer, hooks).authenticate('alice', utf8('old-password')));
    expect(isWireError(error, 'AuthFailed')).toBe(true);
    expect(issuer.issued).toHaveLength(1); // assigned in the log, never handed out
  });

  /** A simple-token issuer that refuses as the apply does: the store's revision moved since the check. */
  class ApplyingIssuer implements TokenIssuer {
    readonly revisionCheck = 'at-apply';
    readonly refused: number[] = [];
    issuedCount = 0;
    constructor(private readonly state: AuthState) {}
    async issue(name: string, authRevision: number): Promise<IssuedToken> {
      if (authRevision < this.state.revision) {
        this.refused.push(authRevision);
        throw wireError('AuthOldRevision');
      }
      this.issuedCount += 1;
      return { kind: 'token', token: `token-${name}-${authRevision}` };
    }
  }

  it.each(['afterPasswordCheck', 'beforeTokenIssue'] as const)(
    'a simple token has no re-read before its assignment: a change at %s is refused by the assignment, retried, the old password refused',
    async (point) => {
      const state = new AuthState();
      await state.setPassword('alice', 'old-password');
      const issuer = new ApplyingIssuer(state);
      let fired = false;
      const hooks: AuthenticateHooks = {
        [point]: async () => {
          if (fired) return;
          fired = true;
          await state.setPassword('alice', 'new-password');
        },
      };
      const error = await failure(authenticator(state, issuer, hooks).authenticate('alice', utf8('old-password')));
      expect(fired).toBe(true);
      expect(issuer.refused).toEqual([6]);
      expect(issuer.issuedCount).toBe(0);
      expect(isWireError(error, 'AuthFailed')).toBe(true);
      // Round 1: the check, then the refused assignment; round 2: the check (new hash: mismatch).
      expect(state.reads).toBe(2);
    },
  );

  it.each([
    ['a simple token (checked at apply): the check, then the read after the assignment', 'at-apply', 2],
    ['a JWT: the check, then the re-read before signing', 'before-issue', 2],
  ] as const)('reads per login: %s', async (_case, revisionCheck, readsCount) => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    const outcome = await authenticator(state, new RecordingIssuer(revisionCheck)).authenticate('alice', utf8('secret'));
    expect(outcome.attemptsCount).toBe(1);
    expect(state.reads).toBe(readsCount);
  });

  it('an unrelated change before the assignment costs one retry, then a token at the new revision', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    const issuer = new ApplyingIssuer(state);
    let bumps = 0;
    const hooks: AuthenticateHooks = {
      beforeTokenIssue: async () => {
        if (bumps++ === 0) state.revision += 1;
      },
    };
    const outcome = await authenticator(state, issuer, hooks).authenticate('alice', utf8('secret'));
    expect(outcome).toEqual({ issued: { kind: 'token', token: 'token-alice-7' }, authRevision: 7, attemptsCount: 2 });
    expect(issuer.refused).toEqual([6]);
  });

  it('an unrelated auth change during the check costs one retry, then succeeds at the new revision', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    let bumps = 0;
    const hooks: AuthenticateHooks = {
      afterPasswordCheck: async () => {
        if (bumps++ === 0) state.revision += 1; // e.g. RoleAdd by someone else
      },
    };
    const outcome = await authenticator(state, new RecordingIssuer('before-issue'), hooks).authenticate('alice', utf8('secret'));
    expect(outcome.attemptsCount).toBe(2);
    expect(outcome.authRevision).toBe(7);
  });

  it('gives up after maxAttemptsCount rounds when the revision keeps moving (bounded)', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'secret');
    let rounds = 0;
    const hooks: AuthenticateHooks = {
      afterPasswordCheck: async () => {
        rounds += 1;
        state.revision += 1;
      },
    };
    const issuer = new RecordingIssuer('before-issue');
    const error = await failure(authenticator(state, issuer, hooks, 3).authenticate('alice', utf8('secret')));
    expect(isWireError(error, 'Timeout')).toBe(true);
    expect(rounds).toBe(3);
    expect(issuer.issued).toHaveLength(0);
  });

  it('injected bug: a stale (non-linearizable) re-read lets the old password through — the race test above would fail', async () => {
    const state = new AuthState();
    await state.setPassword('alice', 'old-password');
    const staleRevision = String(state.revision);
    let reads = 0;
    const staleCheck = async (name: string): Promise<AuthCheck__Output> => {
      const fresh = await state.check(name);
      return reads++ === 0 ? fresh : { ...fresh, auth_revision: staleRevision };
    };
    const issuer = new RecordingIssuer('before-issue');
    const hooks: AuthenticateHooks = { afterPasswordCheck: () => state.setPassword('alice', 'new-password') };
    const broken = new Authenticator({ authCheck: staleCheck, checker, issuer, maxAttemptsCount: 5, logger, hooks });
    await broken.authenticate('alice', utf8('old-password'));
    expect(issuer.issued).toHaveLength(1);
  });
});
