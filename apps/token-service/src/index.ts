export { createTokenService, type TokenService, type TokenServiceDeps } from './token-service';
export { ISSUER_SIGN_METHODS, jwksMaxAgeSeconds, publishedKeysCount, tokenServiceConfig, tokenServiceConfigSchema, type TokenServiceConfig } from './config';
export { KeyRing, type ScheduledKey } from './key-ring';
