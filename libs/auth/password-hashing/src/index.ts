export { BcryptPasswordVerifier, DEFAULT_MAX_VERIFY_COST, type BcryptPasswordVerifierOptions } from './bcrypt-password-verifier';
export { CredentialChecker, type CredentialOutcome, type StoredCredential } from './credential-checker';
export { EmbeddedPasswordPool, type EmbeddedPasswordPoolOptions } from './embedded-password-pool';
export { inProcessPasswordTier, type InProcessTierSettings } from './in-process-tier';
