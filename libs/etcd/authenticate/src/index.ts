export { Authenticator, type AuthenticateAdmission, type AuthenticateHooks, type AuthenticateOutcome, type AuthenticatorOptions, type PasswordCheck, type StoredCredential } from './authenticator';
export type { IssuedToken, RevisionCheck, TokenIssuer } from './token-issuer';
export { passwordErrorWireName } from './password-errors';
