// The token-service's whole configuration: TOKEN_SERVICE_* environment variables, each with a
// default, a unit and a reason. main.ts reads it once; tests build it with tokenServiceConfig(overrides).
import { defineConfig, envName, goTogether, int, list, loadConfig, oneOf, string, type ConfigValues } from '@ward/platform/config';
import { BCRYPT_DEFAULT_COST, BCRYPT_MAX_COST, BCRYPT_MIN_COST } from '@ward/auth/password-jobs';
import { DEFAULT_MAX_VERIFY_COST } from '@ward/auth/password-hashing';
import { passwordTierOptions } from '@ward/auth/password-queue';
import { authAdmissionOptions } from '@ward/auth/password-admission';
import { KEY_ID_PATTERN, MAX_JWT_VERIFICATION_KEYS } from '@ward/auth/tokens';

const HOST_PORT = /^[A-Za-z0-9._-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** Asymmetric methods only: a token-service never shares a secret with its verifiers. */
export const ISSUER_SIGN_METHODS = ['EdDSA', 'ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
/** Claim values (iss, aud): printable, bounded. */
const CLAIM_TEXT = /^[\x21-\x7e]{1,256}$/;

export const tokenServiceConfigSchema = defineConfig({
  prefix: 'TOKEN_SERVICE',
  options: {
    grpcHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'address of the wardtoken.Token gRPC API (Issue, Keys)' }),
    grpcPort: int({ default: 2383, min: 0, max: 65_535, why: 'gRPC port (0: any free port)' }),
    httpHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'address of /.well-known/jwks.json, /healthz, /readyz, /metrics' }),
    httpPort: int({ default: 2384, min: 0, max: 65_535, why: 'HTTP port (0: any free port)' }),
    nodeEndpoints: list({
      default: ['127.0.0.1:23791', '127.0.0.1:23792', '127.0.0.1:23793'],
      pattern: HOST_PORT,
      maxItems: 16,
      why: 'internal API (wardnode.Node) addresses of the raft-nodes, host:port (the AuthCheck reads go there)',
    }),
    certFile: string({ default: '', maxLengthChars: 4096, why: 'PEM certificate (chain) of the gRPC port; with TOKEN_SERVICE_KEY_FILE, Issue and Revoke (which carry passwords) are served over TLS (empty: plaintext)' }),
    keyFile: string({ default: '', maxLengthChars: 4096, why: 'PEM private key of TOKEN_SERVICE_CERT_FILE' }),
    clientCaFile: string({ default: '', maxLengthChars: 4096, why: 'PEM CA bundle: callers (gateways) must present a certificate it signed (mutual TLS; needs the cert and key files)' }),
    nodeTlsCertFile: string({ default: '', maxLengthChars: 4096, why: 'PEM certificate presented to the raft-nodes when they take only mutual TLS (RAFT_NODE_TLS_*); with the key and CA files' }),
    nodeTlsKeyFile: string({ default: '', maxLengthChars: 4096, why: 'PEM private key of TOKEN_SERVICE_NODE_TLS_CERT_FILE' }),
    nodeTlsCaFile: string({ default: '', maxLengthChars: 4096, why: "PEM CA bundle the raft-nodes' certificates are verified against" }),
    signMethod: oneOf({ default: 'EdDSA', values: ISSUER_SIGN_METHODS, why: 'JWT algorithm of the keys this replica generates (or of its key file)' }),
    privateKeyFile: string({
      default: '',
      maxLengthChars: 4096,
      why: "PEM private key an operator brings (it signs for as long as the file is configured; no rotation); empty: this replica generates its own keys and rotates them",
    }),
    keyId: string({ default: '', maxLengthChars: 64, pattern: /^$|^[A-Za-z0-9._-]{1,64}$/, why: 'kid of TOKEN_SERVICE_PRIVATE_KEY_FILE (empty: its RFC 7638 thumbprint)' }),
    issuer: string({ default: 'ward-token-service', maxLengthChars: 256, pattern: CLAIM_TEXT, why: 'the iss claim of issued tokens' }),
    audience: string({ default: 'ward', maxLengthChars: 256, pattern: CLAIM_TEXT, why: 'the aud claim of issued tokens' }),
    ttlSeconds: int({ default: 300, min: 1, max: 86_400, why: "lifetime of an issued token (etcd's jwt ttl default: 5 minutes)" }),
    rotationPeriodSeconds: int({ default: 86_400, min: 2, max: 365 * 86_400, why: 'a generated key signs for this long, then the next one (published one period ahead) takes over' }),
    clockToleranceSeconds: int({ default: 30, min: 0, max: 300, why: 'a key stays published this long past its last token’s exp (verifiers allow this much skew)' }),
    publishUser: string({
      default: 'root',
      maxLengthChars: 256,
      why: 'user (with the root role once auth is on) as whom public keys are put into the cluster’s key directory; the raft-nodes check it at apply',
    }),
    directoryCheckIntervalMs: int({ default: 2000, min: 100, max: 600_000, why: 'how often the key directory is read to find this replica’s keys revoked through another replica' }),
    jwksMaxAgeSeconds: int({ default: 300, min: 0, max: 86_400, why: 'Cache-Control max-age of the key set, at most half the rotation period' }),
    bcryptCost: int({ default: BCRYPT_DEFAULT_COST, min: BCRYPT_MIN_COST, max: BCRYPT_MAX_COST, why: 'cost of the dummy hash checked for unknown users (match the gateways’ --bcrypt-cost)' }),
    ...passwordTierOptions(DEFAULT_MAX_VERIFY_COST),
    ...authAdmissionOptions(),
    requestTimeoutMs: int({ default: 7000, min: 100, max: 600_000, why: 'an AuthCheck read not answered by the raft-nodes within this fails' }),
    retryMaxAttemptsCount: int({ default: 30, min: 1, max: 1000, why: 'tries of one read across leader changes and unreachable members' }),
    retryBaseDelayMs: int({ default: 20, min: 1, max: 10_000, why: 'first backoff between tries (doubles, full jitter)' }),
    retryMaxDelayMs: int({ default: 300, min: 1, max: 60_000, why: 'longest backoff between tries' }),
    authenticateMaxAttemptsCount: int({ default: 5, min: 1, max: 50, why: 'Issue retries when the auth revision moves during the password check' }),
    maxRequestBytes: int({ default: 128 * 1024, min: 1024, max: 4 * 1024 * 1024, why: 'largest Issue request (a name is at most 64 KiB)' }),
    grpcMaxConcurrentStreamsCount: int({ default: 1000, min: 1, max: 100_000, why: 'concurrent calls per client connection' }),
    grpcKeepaliveTimeMs: int({ default: 30_000, min: 1000, max: 3_600_000, why: 'ping idle clients this often to find dead connections' }),
    grpcKeepaliveTimeoutMs: int({ default: 10_000, min: 1000, max: 600_000, why: 'a ping unanswered this long closes the connection' }),
    httpRequestTimeoutMs: int({ default: 10_000, min: 1000, max: 600_000, why: 'whole HTTP request, headers and body' }),
    shutdownGraceMs: int({ default: 5000, min: 0, max: 600_000, why: 'running calls get this long to finish on shutdown' }),
    logLevel: oneOf({ default: 'info', values: LOG_LEVELS, why: 'log verbosity' }),
  },
  validate: (config) => {
    const problems: string[] = [];
    if (config.nodeEndpoints.length === 0) problems.push('TOKEN_SERVICE_NODE_ENDPOINTS needs at least one raft-node address');
    if (config.retryBaseDelayMs > config.retryMaxDelayMs) problems.push('TOKEN_SERVICE_RETRY_BASE_DELAY_MS must be ≤ TOKEN_SERVICE_RETRY_MAX_DELAY_MS');
    if (config.bcryptMaxVerifyCost < config.bcryptCost) problems.push('TOKEN_SERVICE_BCRYPT_MAX_VERIFY_COST must be ≥ TOKEN_SERVICE_BCRYPT_COST');
    if (config.redisUrl !== '' && config.passwordPayloadKeys === '') problems.push('TOKEN_SERVICE_PASSWORD_PAYLOAD_KEYS is required with TOKEN_SERVICE_REDIS_URL');
    const serverTls = goTogether({ TOKEN_SERVICE_CERT_FILE: config.certFile, TOKEN_SERVICE_KEY_FILE: config.keyFile });
    if (serverTls !== undefined) problems.push(serverTls);
    if (config.clientCaFile !== '' && config.certFile === '') problems.push('TOKEN_SERVICE_CLIENT_CA_FILE needs TOKEN_SERVICE_CERT_FILE and TOKEN_SERVICE_KEY_FILE (TLS)');
    const nodeTls = goTogether({
      TOKEN_SERVICE_NODE_TLS_CERT_FILE: config.nodeTlsCertFile,
      TOKEN_SERVICE_NODE_TLS_KEY_FILE: config.nodeTlsKeyFile,
      TOKEN_SERVICE_NODE_TLS_CA_FILE: config.nodeTlsCaFile,
    });
    if (nodeTls !== undefined) problems.push(nodeTls);
    if (config.keyId !== '' && config.privateKeyFile === '') problems.push('TOKEN_SERVICE_KEY_ID names the key of TOKEN_SERVICE_PRIVATE_KEY_FILE');
    if (config.keyId !== '' && !KEY_ID_PATTERN.test(config.keyId)) problems.push('TOKEN_SERVICE_KEY_ID must match [A-Za-z0-9._-]{1,64}');
    if (config.privateKeyFile === '' && publishedKeysCount(config) > MAX_JWT_VERIFICATION_KEYS) {
      problems.push(`TOKEN_SERVICE_ROTATION_PERIOD_SECONDS is too short for the token lifetime: more than ${MAX_JWT_VERIFICATION_KEYS} keys would be published at once`);
    }
    return problems;
  },
});

export type TokenServiceConfig = ConfigValues<(typeof tokenServiceConfigSchema)['options']>;

/**
 * Keys published at once under rotation: the signing one, the next one, and every earlier one
 * whose tokens may still be unexpired (lifetime + tolerance after it stopped signing).
 */
export function publishedKeysCount(config: Pick<TokenServiceConfig, 'ttlSeconds' | 'clockToleranceSeconds' | 'rotationPeriodSeconds'>): number {
  return 2 + Math.ceil((config.ttlSeconds + config.clockToleranceSeconds) / config.rotationPeriodSeconds);
}

/** The max-age verifiers may cache the key set: the configured one, at most half a rotation period. */
export function jwksMaxAgeSeconds(config: Pick<TokenServiceConfig, 'jwksMaxAgeSeconds' | 'rotationPeriodSeconds' | 'privateKeyFile'>): number {
  if (config.privateKeyFile !== '') return config.jwksMaxAgeSeconds;
  return Math.min(config.jwksMaxAgeSeconds, Math.floor(config.rotationPeriodSeconds / 2));
}

/** A complete, validated configuration: the defaults with `overrides` applied (tests, embedding). */
export function tokenServiceConfig(overrides: Partial<TokenServiceConfig> = {}): TokenServiceConfig {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    env[envName(tokenServiceConfigSchema, key)] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return loadConfig(tokenServiceConfigSchema, env);
}
