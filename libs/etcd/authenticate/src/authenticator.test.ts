// The rule with a scripted password check (the gateway's authenticator.test.ts runs it with real
// bcrypt): the token carries the revision the password was checked at, a moved revision costs a
// round, and a refused password issues nothing.
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ward/platform/logging';
import { isWireError } from '@ward/etcd/wire-errors';
import type { AuthCheck__Output } from '@ward/etcd/proto';
import { Authenticator } from './authenticator';
import type { PasswordCheck, StoredCredential } from './authenticator';
import type { IssuedToken, TokenIssuer } from './token-issuer';

const logger = createLogger({ name: 'test', level: 'silent' });

function reads(revisions: number[]): (name: string) => Promise<AuthCheck__Output> {
  let index = 0;
  return async () => {
    const revision = revisions[Math.min(index, revisions.length - 1)]!;
    index += 1;
    return { auth_enabled: true, user_exists: true, no_password: false, password_hash: Buffer.from('h'), auth_revision: String(revision) };
  };
}

const checker = (answer: 'match' | 'mismatch'): PasswordCheck & { seen: StoredCredential[] } => {
  const seen: StoredCredential[] = [];
  return { seen, check: async (_password, stored) => (seen.push(stored), answer) };
};

class Issuer implements TokenIssuer {
  readonly revisionCheck = 'before-issue';
  readonly revisions: number[] = [];
  async issue(name: string, authRevision: number): Promise<IssuedToken> {
    this.revisions.push(authRevision);
    return { kind: 'token', token: `${name}@${authRevision}` };
  }
}

describe('Authenticator (shared rule)', () => {
  it('a match issues at the revision the password was checked at', async () => {
    const issuer = new Issuer();
    const outcome = await new Authenticator({ authCheck: reads([7, 7]), checker: checker('match'), issuer, maxAttemptsCount: 3, logger }).authenticate('alice', new Uint8Array([1]));
    expect(outcome).toEqual({ issued: { kind: 'token', token: 'alice@7' }, authRevision: 7, attemptsCount: 1 });
  });

  it('a moved revision between the check and the re-read costs one more round', async () => {
    const issuer = new Issuer();
    const outcome = await new Authenticator({ authCheck: reads([7, 8, 8, 8]), checker: checker('match'), issuer, maxAttemptsCount: 3, logger }).authenticate('alice', new Uint8Array([1]));
    expect(outcome.attemptsCount).toBe(2);
    expect(issuer.revisions).toEqual([8]);
  });

  it('a mismatch is AuthFailed and issues nothing', async () => {
    const issuer = new Issuer();
    const failure = await new Authenticator({ authCheck: reads([7]), checker: checker('mismatch'), issuer, maxAttemptsCount: 3, logger })
      .authenticate('alice', new Uint8Array([1]))
      .catch((error: unknown) => error);
    expect(isWireError(failure, 'AuthFailed')).toBe(true);
    expect(issuer.revisions).toEqual([]);
  });
});
