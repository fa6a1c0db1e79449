// What Authenticate hands out once the password checked out, and who makes it: the gateway's
// simple-token and JWT issuers, or the token-service's signer.

/** An issued token: the encoded AuthenticateResponse from the cluster, or a JWT to wrap. */
export type IssuedToken = { readonly kind: 'response'; readonly bytes: Buffer } | { readonly kind: 'token'; readonly token: string };

export interface TokenIssuer {
  /**
   * Whether the auth revision must be read again after issuing: a simple token is assigned when
   * its entry applies, which may be after a password change; a JWT is signed here and now.
   */
  readonly recheckAfterIssue: boolean;
  issue(name: string, authRevision: number, signal?: AbortSignal): Promise<IssuedToken>;
}
