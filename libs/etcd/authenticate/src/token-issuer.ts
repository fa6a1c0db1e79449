// What Authenticate hands out once the password checked out, and who makes it: the gateway's
// simple-token and JWT issuers, or the token-service's signer.

/** An issued token: the encoded AuthenticateResponse from the cluster, or a JWT to wrap. */
export type IssuedToken = { readonly kind: 'response'; readonly bytes: Buffer } | { readonly kind: 'token'; readonly token: string };

/**
 * - `before-issue`: the token is made here and now (a JWT): the auth revision is read again after
 *   the password check, and the token issued only if it has not moved.
 * - `at-apply`: the token is assigned by a log entry carrying the revision the password was
 *   checked at (a simple token), whose apply refuses it (AuthOldRevision) when a change was ordered
 *   since: no read before it, as that apply is the later and stronger check. The revision is read
 *   once more after the assignment, so a token assigned just before a change is not handed out.
 */
export type RevisionCheck = 'before-issue' | 'at-apply';

export interface TokenIssuer {
  /**
   * How a change to the auth store racing the password check is caught (see RevisionCheck).
   */
  readonly revisionCheck: RevisionCheck;
  issue(name: string, authRevision: number, signal?: AbortSignal): Promise<IssuedToken>;
}
