export {
  TOKEN_ERROR_CODES,
  TOKEN_INVALID_REASONS,
  TokenError,
  type TokenErrorCode,
  type TokenErrorContext,
  type TokenInvalidReason,
} from './errors';
export { JWT_SIGN_METHODS, MIN_RSA_MODULUS_BITS, isJwtSignMethod, type JwtSignMethod } from './sign-method';
export { KEY_ID_PATTERN } from './key-id';
export { MAX_KEY_MATERIAL_BYTES, loadJwtKey, loadPublicJwk, type JwtKey, type JwtKeyConfig } from './key-material';
export { GENERATED_RSA_MODULUS_BITS, generateJwtKeyPem, type GeneratedKeyPem } from './key-generation';
export { signIssuedToken, type IssuedTokenClaims } from './jwt-issue';
export { FORBIDDEN_JWT_HEADERS, verifyJwt } from './jwt-verify';
export {
  DEFAULT_JWT_CLOCK_TOLERANCE_SECONDS,
  DEFAULT_JWT_MAX_LIFETIME_SECONDS,
  DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS,
  DEFAULT_JWT_TTL_MS,
  MAX_JWT_VERIFICATION_KEYS,
  type JwtPolicy,
} from './jwt-options';
export type { JwtIdentity } from './jwt-claims';
export { JwtTokenProvider, type JwtTokenProviderOptions } from './jwt-token-provider';
export { CryptoRng } from './crypto-rng';
export { parseGoDurationMs } from './go-duration';
export { jwtKeyConfigFromOption, parseAuthTokenOption, type AuthTokenOption } from './auth-token-option';
