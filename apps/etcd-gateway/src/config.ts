// The etcd-gateway's whole configuration: GATEWAY_* environment variables, each with a default, a
// unit and a reason. main.ts reads it once; tests build it with gatewayConfig(overrides).
import { bool, defineConfig, envName, goTogether, int, list, loadConfig, oneOf, string, type ConfigValues } from '@ward/platform/config';
import { BCRYPT_DEFAULT_COST, BCRYPT_MAX_COST, BCRYPT_MIN_COST } from '@ward/auth/password-jobs';
import { DEFAULT_MAX_VERIFY_COST } from '@ward/auth/password-hashing';
import { passwordTierOptions } from '@ward/auth/password-queue';
import { authAdmissionOptions } from '@ward/auth/password-admission';
import { parseAuthTokenOption } from '@ward/auth/tokens';
import { DEFAULT_MAX_REQUEST_BYTES, GRPC_OVERHEAD_BYTES } from '@ward/etcd/api-mapping';


const HOST_PORT = /^[A-Za-z0-9._-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const gatewayConfigSchema = defineConfig({
  prefix: 'GATEWAY',
  options: {
    grpcHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'address etcd clients connect to' }),
    grpcPort: int({ default: 2379, min: 0, max: 65_535, why: 'etcd client port: gRPC and the HTTP/1.1 JSON gateway, /version, /health, /metrics on one listener (0: any free port)' }),
    httpHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'address of the JSON gateway, /healthz, /readyz, /metrics' }),
    httpPort: int({ default: 2381, min: 0, max: 65_535, why: 'JSON gateway and health port (0: any free port)' }),
    certFile: string({ default: '', maxLengthChars: 4096, why: "etcd's --cert-file: PEM certificate (chain) of the client port; set with GATEWAY_KEY_FILE to serve TLS (empty: plaintext)" }),
    keyFile: string({ default: '', maxLengthChars: 4096, why: "etcd's --key-file: PEM private key of GATEWAY_CERT_FILE" }),
    trustedCaFile: string({ default: '', maxLengthChars: 4096, why: "etcd's --trusted-ca-file: PEM CA bundle that client certificates are verified against" }),
    clientCertAuth: bool({
      default: false,
      why: "etcd's --client-cert-auth: require a client certificate signed by GATEWAY_TRUSTED_CA_FILE; a call without a token is then its CommonName's user",
    }),
    nodeTlsCertFile: string({ default: '', maxLengthChars: 4096, why: "PEM certificate the gateway presents to the raft-nodes when they take only mutual TLS (RAFT_NODE_TLS_*); with the key and CA files" }),
    nodeTlsKeyFile: string({ default: '', maxLengthChars: 4096, why: 'PEM private key of GATEWAY_NODE_TLS_CERT_FILE' }),
    nodeTlsCaFile: string({ default: '', maxLengthChars: 4096, why: "PEM CA bundle the raft-nodes' certificates are verified against" }),
    httpTls: bool({
      default: false,
      why: 'serve the JSON gateway and health port over HTTPS with GATEWAY_CERT_FILE too (a client certificate then required there as on the gRPC port with GATEWAY_CLIENT_CERT_AUTH)',
    }),
    advertiseClientUrl: string({
      default: '',
      maxLengthChars: 512,
      pattern: /^$|^https?:\/\/\S+$/,
      why: 'client URL reported by MemberList for every member (empty: http://<grpc host>:<bound port>)',
    }),
    nodeEndpoints: list({
      default: ['127.0.0.1:23791', '127.0.0.1:23792', '127.0.0.1:23793'],
      pattern: HOST_PORT,
      maxItems: 16,
      why: 'internal API (wardnode.Node) addresses of the raft-nodes, host:port',
    }),
    authToken: string({
      default: 'simple',
      maxLengthChars: 4096,
      why: "etcd's --auth-token: simple, or jwt,sign-method=RS256,priv-key=<file>,pub-key=<file>,ttl=5m (pub-key only: verify-only)",
    }),
    jwtVerificationKeyFiles: list({
      default: [],
      maxItems: 15,
      why: 'further public keys (PEM files, same sign method) accepted for verification: key rotation, external issuers',
    }),
    tokenServiceEndpoints: list({
      default: [],
      pattern: HOST_PORT,
      maxItems: 16,
      why: 'token-service gRPC addresses (host:port): when set, tokens are the token-service’s JWTs, verified against the cluster’s signing-key directory, and Authenticate asks a token-service to mint them (GATEWAY_AUTH_TOKEN must stay simple)',
    }),
    tokenServiceCaFile: string({
      default: '',
      maxLengthChars: 4096,
      why: 'PEM CA bundle: talk to the token-services over TLS, verifying them against it (and present GATEWAY_NODE_TLS_CERT_FILE/KEY_FILE when set); empty: plaintext',
    }),
    jwtIssuer: string({ default: 'ward-token-service', maxLengthChars: 256, pattern: /^[\x21-\x7e]{1,256}$/, why: 'iss that token-service JWTs must carry (TOKEN_SERVICE_ISSUER)' }),
    jwtAudience: string({ default: 'ward', maxLengthChars: 256, pattern: /^[\x21-\x7e]{1,256}$/, why: 'aud that token-service JWTs must carry (TOKEN_SERVICE_AUDIENCE)' }),
    jwtKeyRefreshMinIntervalMs: int({ default: 1000, min: 10, max: 60_000, why: 'two reads of the signing-key directory are at least this far apart (unknown kids cannot make the gateway hammer the cluster)' }),
    jwtKeyDirectoryMaxAgeMs: int({ default: 30_000, min: 100, max: 3_600_000, why: 'a cached signing-key directory older than this is read again at the next token' }),
    jwtExternalIssuersFile: string({
      default: '',
      maxLengthChars: 4096,
      why: 'JSON file of outside JWT issuers trusted for verification only: [{issuer, audience, algorithms, jwksUrl | keyFile, keyId?}] (empty: none)',
    }),
    jwtExternalRefreshMinIntervalMs: int({ default: 10_000, min: 100, max: 3_600_000, why: 'two fetches of one outside issuer’s JWKS are at least this far apart' }),
    jwtExternalMaxAgeMs: int({ default: 300_000, min: 1000, max: 86_400_000, why: 'an outside issuer’s JWKS older than this is fetched again at the next token' }),
    jwtClockToleranceSeconds: int({ default: 30, min: 0, max: 300, why: 'leeway for exp/nbf between the minting host and this one' }),
    jwtMaxLifetimeSeconds: int({ default: 86_400, min: 1, max: 315_360_000, why: 'tokens whose exp lies further ahead are refused' }),
    jwtRequireExpiry: bool({ default: true, why: 'refuse JWTs without exp (etcd accepts them: such a token would never expire)' }),
    tokenCacheMs: int({ default: 1000, min: 0, max: 1000, why: 'a simple-token resolution, or the auth revision of client-certificate identities, is reused this long (the contract allows at most 1 s)' }),
    bcryptCost: int({ default: BCRYPT_DEFAULT_COST, min: BCRYPT_MIN_COST, max: BCRYPT_MAX_COST, why: "log2 rounds of new password hashes (etcd's --bcrypt-cost)" }),
    ...passwordTierOptions(DEFAULT_MAX_VERIFY_COST),
    ...authAdmissionOptions(),
    maxRequestBytes: int({ default: DEFAULT_MAX_REQUEST_BYTES, min: 1024, max: 64 * 1024 * 1024, why: "etcd's --max-request-bytes: larger proposals get 'request is too large'" }),
    grpcMaxSendBytes: int({ default: 256 * 1024 * 1024, min: 1024 * 1024, max: 256 * 1024 * 1024, why: 'largest response sent (a big Range)' }),
    nodeExchange: oneOf({
      default: 'frames',
      values: ['frames', 'grpc'] as const,
      why: "how Propose, Read, ReadIndex and AuthCheck travel to a raft-node: 'frames', one plain (or mutual TLS) connection to its API port without HTTP/2; 'grpc', a gRPC stream (for raft-nodes that predate the framed Exchange)",
    }),
    grpcServeUnaryDirectly: bool({ default: true, why: "serve plain unary gRPC calls straight off their HTTP/2 streams; off: every call goes through grpc-js's call machinery (for comparison)" }),
    httpBodyLimitBytes: int({ default: 4 * 1024 * 1024, min: 1024, max: 128 * 1024 * 1024, why: 'largest JSON gateway body (base64 makes values 4/3 larger)' }),
    readReplica: bool({
      default: true,
      why: 'keep a read replica of the state (fed by one member) and answer Range and read-only Txn from it: serializable at once, linearizable after a ReadIndex round shared by concurrent reads; off: every read goes to a member',
    }),
    readReplicaFeedFromLeader: bool({
      default: true,
      why: "feed the read replica from the leader, which applies first: a read right after a write through this gateway waits less (a feed from another member moves to the leader, at most once a second); off: from whichever member the feed reached, which keeps that work off the leader",
    }),
    readReplicaCatchUpWaitMs: int({ default: 200, min: 1, max: 10_000, why: 'a read waits this long for the replica to reach its index, then goes to a member (and the replica re-syncs)' }),
    readReplicaMaxBytes: int({ default: 1024 * 1024 * 1024, min: 1024 * 1024, max: 2 * 1024 * 1024 * 1024 - 1, why: 'largest state snapshot the read replica takes; a larger state leaves reads to the members' }),
    requestTimeoutMs: int({ default: 7000, min: 100, max: 600_000, why: 'a request not answered by the raft-nodes within this fails (etcd: 5 s + 2 election timeouts)' }),
    resolveTokenTimeoutMs: int({ default: 2000, min: 10, max: 60_000, why: 'how long a raft-node may wait to apply a simple token before it is invalid' }),
    retryMaxAttemptsCount: int({ default: 30, min: 1, max: 1000, why: 'tries of one request across leader changes and unreachable nodes (the request timeout also bounds them)' }),
    retryBaseDelayMs: int({ default: 20, min: 1, max: 10_000, why: 'first backoff between tries (doubles, full jitter)' }),
    retryMaxDelayMs: int({ default: 300, min: 1, max: 60_000, why: 'longest backoff between tries' }),
    authenticateMaxAttemptsCount: int({ default: 5, min: 1, max: 50, why: 'Authenticate retries when the auth revision moves during the password check' }),
    maxWatchStreamsCount: int({ default: 10_000, min: 1, max: 1_000_000, why: 'client Watch streams open at once' }),
    maxKeepAliveStreamsCount: int({ default: 10_000, min: 1, max: 1_000_000, why: 'client LeaseKeepAlive streams open at once' }),
    // Per-caller bounds, checked before a stream costs anything (a member stream, a renewal): one
    // caller can never fill the global caps above, which only many callers together reach.
    maxStreamsPerConnectionCount: int({
      default: 256,
      min: 1,
      max: 100_000,
      why: "Watch and LeaseKeepAlive streams on one client connection; more get 'too many requests' (an etcd client uses a handful per connection)",
    }),
    maxStreamsPerUserCount: int({
      default: 1000,
      min: 1,
      max: 1_000_000,
      why: "Watch and LeaseKeepAlive streams of one user (the stream's token) over all connections; more get 'too many requests'; must stay below both global caps",
    }),
    maxStreamsPerAddressCount: int({
      default: 500,
      min: 1,
      max: 1_000_000,
      why: "Watch and LeaseKeepAlive streams of one client address while anonymous (no valid token, or auth off); more get 'too many requests'; must stay below both global caps",
    }),
    maxWatchersPerStreamCount: int({
      default: 1000,
      min: 1,
      max: 1_000_000,
      why: "watchers on one Watch stream (created or being created); a create beyond is refused on the stream with 'too many requests', as a member refuses one",
    }),
    maxWatchersPerCallerCount: int({
      default: 10_000,
      min: 1,
      max: 100_000_000,
      why: "watchers of one user, or one anonymous address, over all its streams; a create beyond is refused with 'too many requests'",
    }),
    maxInFlightPerUserCount: int({
      default: 1000,
      min: 1,
      max: 9999,
      why: "requests of one user (KV, lease, auth management, maintenance) in flight at once; more get 'too many requests' at once (below the 10,000 calls a gateway keeps pending per member)",
    }),
    maxInFlightPerAddressCount: int({
      default: 1000,
      min: 1,
      max: 9999,
      why: "requests of one client address in flight at once while anonymous (no token, or auth off); more get 'too many requests' at once",
    }),
    streamIdleTimeoutMs: int({
      default: 30_000,
      min: 100,
      max: 3_600_000,
      why: 'a Watch stream that creates no watcher, or a LeaseKeepAlive stream that renews nothing, within this is closed with UNAVAILABLE (etcd clients send their first request at once, and reopen on UNAVAILABLE)',
    }),
    grpcKeepaliveTimeMs: int({ default: 30_000, min: 1000, max: 3_600_000, why: 'ping idle clients this often to find dead connections' }),
    grpcKeepaliveTimeoutMs: int({ default: 10_000, min: 1000, max: 600_000, why: 'a ping unanswered this long closes the connection' }),
    grpcMaxConcurrentStreamsCount: int({ default: 1000, min: 1, max: 100_000, why: 'concurrent calls per client connection' }),
    clientPortSniffTimeoutMs: int({
      default: 10_000,
      min: 100,
      max: 600_000,
      why: 'a client-port connection must tell gRPC from HTTP/1.1 (its first bytes, or its TLS handshake and ALPN) within this, or it is closed',
    }),
    clientPortMaxConnectionsCount: int({ default: 20_000, min: 1, max: 1_000_000, why: 'connections open at once on the client port (gRPC and HTTP together); more are refused at accept' }),
    httpStreamStallTimeoutMs: int({
      default: 30_000,
      min: 100,
      max: 3_600_000,
      why: 'an HTTP watch or keep-alive stream whose reader leaves its output untaken this long is dropped with its connection',
    }),
    httpRequestTimeoutMs: int({ default: 30_000, min: 1000, max: 600_000, why: 'HTTP request deadline: headers within this, a body within this of its headers; a streaming body (watch, keep-alive) has none as a whole, each request object in it must arrive within this of its first byte' }),
    shutdownGraceMs: int({ default: 5000, min: 0, max: 600_000, why: 'running calls get this long to finish on shutdown' }),
    logLevel: oneOf({ default: 'info', values: LOG_LEVELS, why: 'log verbosity' }),
  },
  validate: (config) => {
    const problems: string[] = [];
    try {
      const option = parseAuthTokenOption(config.authToken);
      if (option.type === 'none') problems.push('GATEWAY_AUTH_TOKEN: the token type must be simple or jwt');
    } catch (error) {
      problems.push(`GATEWAY_AUTH_TOKEN: ${(error as Error).message}`);
    }
    if (config.tokenServiceEndpoints.length > 0 && config.authToken !== 'simple') {
      problems.push('GATEWAY_TOKEN_SERVICE_ENDPOINTS replaces GATEWAY_AUTH_TOKEN: leave it at simple');
    }
    if (config.nodeEndpoints.length === 0) problems.push('GATEWAY_NODE_ENDPOINTS needs at least one raft-node address');
    if (config.retryBaseDelayMs > config.retryMaxDelayMs) problems.push('GATEWAY_RETRY_BASE_DELAY_MS must be ≤ GATEWAY_RETRY_MAX_DELAY_MS');
    if (config.bcryptMaxVerifyCost < config.bcryptCost) problems.push('GATEWAY_BCRYPT_MAX_VERIFY_COST must be ≥ GATEWAY_BCRYPT_COST');
    if (config.redisUrl !== '' && config.passwordPayloadKeys === '') {
      problems.push('GATEWAY_PASSWORD_PAYLOAD_KEYS is required with GATEWAY_REDIS_URL');
    }
    const serverTls = goTogether({ GATEWAY_CERT_FILE: config.certFile, GATEWAY_KEY_FILE: config.keyFile });
    if (serverTls !== undefined) problems.push(serverTls);
    if (config.trustedCaFile !== '' && config.certFile === '') problems.push('GATEWAY_TRUSTED_CA_FILE needs GATEWAY_CERT_FILE and GATEWAY_KEY_FILE (TLS)');
    if (config.httpTls && config.certFile === '') problems.push('GATEWAY_HTTP_TLS needs GATEWAY_CERT_FILE and GATEWAY_KEY_FILE');
    if (config.clientCertAuth && config.trustedCaFile === '') problems.push('GATEWAY_CLIENT_CERT_AUTH needs GATEWAY_TRUSTED_CA_FILE to verify client certificates against');
    const nodeTls = goTogether({ GATEWAY_NODE_TLS_CERT_FILE: config.nodeTlsCertFile, GATEWAY_NODE_TLS_KEY_FILE: config.nodeTlsKeyFile, GATEWAY_NODE_TLS_CA_FILE: config.nodeTlsCaFile });
    if (nodeTls !== undefined) problems.push(nodeTls);
    const globalStreamsCap = Math.min(config.maxWatchStreamsCount, config.maxKeepAliveStreamsCount);
    if (config.maxStreamsPerUserCount >= globalStreamsCap) problems.push('GATEWAY_MAX_STREAMS_PER_USER_COUNT must be below GATEWAY_MAX_WATCH_STREAMS_COUNT and GATEWAY_MAX_KEEP_ALIVE_STREAMS_COUNT (one user must not fill them)');
    if (config.maxStreamsPerAddressCount >= globalStreamsCap) problems.push('GATEWAY_MAX_STREAMS_PER_ADDRESS_COUNT must be below GATEWAY_MAX_WATCH_STREAMS_COUNT and GATEWAY_MAX_KEEP_ALIVE_STREAMS_COUNT (one address must not fill them)');
    if (config.resolveTokenTimeoutMs > config.requestTimeoutMs) problems.push('GATEWAY_RESOLVE_TOKEN_TIMEOUT_MS must be ≤ GATEWAY_REQUEST_TIMEOUT_MS');
    return problems;
  },
});

export type GatewayConfig = ConfigValues<(typeof gatewayConfigSchema)['options']>;

/** The gRPC receive limit: requests above it fail with RESOURCE_EXHAUSTED before any handler. */
export function grpcMaxReceiveBytes(config: Pick<GatewayConfig, 'maxRequestBytes'>): number {
  return config.maxRequestBytes + GRPC_OVERHEAD_BYTES;
}

/**
 * A complete, validated configuration: the defaults with `overrides` applied (tests, embedding).
 * The overrides go through the same parsing and checks as environment variables.
 */
export function gatewayConfig(overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    env[envName(gatewayConfigSchema, key)] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return loadConfig(gatewayConfigSchema, env);
}
