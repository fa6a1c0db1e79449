// createGateway: the whole etcd-gateway as a started, stoppable service — etcd's v3 gRPC API on
// one port, etcd's JSON gateway with /healthz /readyz /metrics on another, the raft-node cluster
// behind. Stateless: run as many as you like against the same cluster.
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import { CredentialChecker, inProcessPasswordTier } from '@ward/auth/password-hashing';
import type { PasswordTier, PasswordVerifier } from '@ward/auth/password-jobs';
import { createPasswordTier, redisConnectionFromUrl } from '@ward/auth/password-queue';
import { createAuthAdmission, type AuthAdmission } from '@ward/auth/password-admission';
import { CryptoRng, DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS } from '@ward/auth/tokens';
import { DEFAULT_KV_REQUEST_LIMITS } from '@ward/etcd/api-mapping';
import { NODE_MAX_MESSAGE_BYTES } from '@ward/etcd/node-calls';
import { createGrpcServer, type GrpcServer, type TlsMaterial, type Cancellation } from '@ward/platform/grpc-server';
import { cachedProbe, createHttpServer, type Readiness } from '@ward/platform/http-server';
import { createLogger, unexpectedErrorLog, type Logger, type UnexpectedErrorLog } from '@ward/platform/logging';
import { systemClock, type Clock, type Rng } from '@ward/shared/clock';
import { Authenticator, type AuthenticateAdmission, type AuthenticateHooks, type AuthenticateOutcome } from '@ward/etcd/authenticate';
import { JwtTokenIssuer, SimpleTokenIssuer, type TokenIssuer } from './authenticate/token-issuer';
import { TokenServiceClient } from './authenticate/token-service-client';
import { decodeApplyResponse } from '@ward/etcd/api-mapping';
import { isWireError } from '@ward/etcd/wire-errors';
import { encodeApplyRequest } from '@ward/etcd/apply';
import { DirectoryJwtVerifier } from './identity/directory-jwt-verifier';
import { ExternalJwtVerifier, parseExternalIssuers } from './identity/external-issuers';
import { readFile } from 'node:fs/promises';
import { ClusterClient } from './cluster/cluster-client';
import { grpcMaxReceiveBytes, type GatewayConfig } from './config';
import { mapGatewayError } from './errors/error-mapping';
import { errorBody, httpError, registerJsonGateway } from './http/json-gateway';
import { IdentityResolver } from './identity/identity-resolver';
import { JwtTokenVerifier } from './identity/jwt-token-verifier';
import { SimpleTokenVerifier } from './identity/simple-token-verifier';
import { createTokenSetup, type TokenSetup } from './identity/token-setup';
import type { TokenVerifier } from './identity/token-verifier';
import { InFlightBounds } from './requests/in-flight';
import { RequestExecutor, membersOnly } from './requests/request-executor';
import { ReadReplica } from './replica/read-replica';
import { ReplicaReads } from './replica/replica-reads';
import { RequestIds } from './requests/request-ids';
import { AuthApi } from './services/auth-api';
import { ClusterApi } from './services/cluster-api';
import { registerEtcdServices } from './services/grpc-services';
import { KvApi } from './services/kv-api';
import { LeaseApi } from './services/lease-api';
import { KeepAliveRelay } from './services/lease-keep-alive';
import { MaintenanceApi } from './services/maintenance-api';
import { unaryRpcs, type UnaryRpc } from './services/rpc-table';
import { StreamAccounting } from './services/stream-accounting';
import { WatchRelay } from './services/watch-relay';
import { clientPortTls, nodeTls, serverCredentials, servesTls, tokenServiceChannelCredentials } from './tls/server-tls';
import { createGatewayMetrics, type GatewayMetrics } from './gateway-metrics';
import { CLIENT_HTTP_TIMEOUT_CHECK_INTERVAL_MS, startClientPort, type ClientPort } from './client-port/client-port';

/** Room for the header on top of the request limit in a read's entry (the raft-nodes allow the same). */
const READ_ENTRY_OVERHEAD_BYTES = 64 * 1024;

/** What the process provides; everything is optional (tests inject clocks, hooks and loggers). */
export interface GatewayDeps {
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Randomness for backoff jitter and simple-token prefixes; must be unpredictable in production. */
  readonly rng?: Rng;
  /** Replaces the configured password tier (tests). */
  readonly passwordVerifier?: PasswordVerifier;
  /** Fixed points in Authenticate, to force races deterministically in tests. */
  readonly authenticateHooks?: AuthenticateHooks;
  /** Prometheus process metrics (CPU, memory, event loop); off in tests that start many gateways. */
  readonly collectProcessMetrics?: boolean;
}

/** A running gateway. */
export interface Gateway {
  readonly grpcPort: number;
  readonly httpPort: number;
  /** host:port of the etcd gRPC API (what etcdctl --endpoints takes). */
  readonly grpcAddress: string;
  readonly httpAddress: string;
  /** The client URL MemberList reports. */
  readonly advertisedClientUrl: string;
  readonly tokenType: 'simple' | 'jwt' | 'token-service';
  readonly passwordTier: PasswordTier['kind'] | 'injected';
  /** Serves one HTTP request in process (fastify's inject), for tests of the JSON gateway. */
  readonly injectHttp: FastifyInstance['inject'];
  /** Drains calls (up to shutdownGraceMs), then closes everything. Idempotent. */
  stop(): Promise<void>;
}

function tokenParts(setup: TokenSetup, cluster: ClusterClient, clock: Clock, rng: Rng, config: GatewayConfig, ids: RequestIds): { verifier: TokenVerifier; issuer: TokenIssuer } {
  if (setup.type === 'jwt') return { verifier: new JwtTokenVerifier(setup.provider), issuer: new JwtTokenIssuer(setup.provider) };
  return {
    verifier: new SimpleTokenVerifier(cluster, clock, config.tokenCacheMs),
    issuer: new SimpleTokenIssuer((entry, signal) => cluster.propose(entry, signal), ids, rng),
  };
}

function createCluster(config: GatewayConfig, logger: Logger, clock: Clock, rng: Rng, tls: ReturnType<typeof nodeTls>): ClusterClient {
  return new ClusterClient({
    endpoints: config.nodeEndpoints,
    requestTimeoutMs: config.requestTimeoutMs,
    resolveTokenTimeoutMs: config.resolveTokenTimeoutMs,
    retry: { maxAttemptsCount: config.retryMaxAttemptsCount, baseDelayMs: config.retryBaseDelayMs, maxDelayMs: config.retryMaxDelayMs },
    connection: {
      // What a member may send in one message, whatever this gateway's bound on a client's answer.
      maxReceiveBytes: NODE_MAX_MESSAGE_BYTES,
      maxSendBytes: grpcMaxReceiveBytes(config) + 64 * 1024,
      keepaliveTimeMs: config.grpcKeepaliveTimeMs,
      keepaliveTimeoutMs: config.grpcKeepaliveTimeoutMs,
      exchangeTransport: config.nodeExchange,
      ...(tls === undefined ? {} : { credentials: tls.credentials, tls: tls.material }),
    },
    clock,
    rng,
    logger: logger.child({ component: 'cluster' }),
  });
}

interface Wiring {
  readonly config: GatewayConfig;
  readonly deps: GatewayDeps;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly cluster: ClusterClient;
  readonly passwords: PasswordVerifier;
  readonly tokenSetup: TokenSetup;
  readonly metrics: GatewayMetrics;
  /** The client port's certificate, key and CA bundle (null: plaintext). */
  readonly clientTls: TlsMaterial | null;
  /** Ready while some member reports a leader (asked at most once a second; /readyz and /health share it). */
  readonly ready: () => Promise<boolean>;
  /** /readyz: a leader is known and the password tier can answer (the reasons when not). */
  readonly readiness: () => Promise<Readiness>;
  /** TLS towards the token-services (GATEWAY_TOKEN_SERVICE_CA_FILE). */
  readonly tokenServiceCredentials: ChannelCredentials | undefined;
  /** Admission control in front of every Authenticate (throttle, fair queue, in-flight bound). */
  readonly admission: AuthenticateAdmission;
}

/**
 * Tokens of the token-service: verified against the cluster's signing-key directory, minted by a
 * token-service on Authenticate.
 */
function tokenServiceParts(w: Wiring, ids: RequestIds): { verifier: TokenVerifier; authenticator: TokenServiceClient } {
  const { config, cluster } = w;
  const readDirectory = async () => {
    const entry = encodeApplyRequest({ header: { id: ids.next(), username: '', authRevision: 0 }, operation: { type: 'signingKeyList' } });
    const { response } = decodeApplyResponse('signingKeyList', await cluster.propose(entry));
    if (response.type !== 'signingKeyList') throw new TypeError('the cluster answered the key directory read with another response');
    return response.response;
  };
  const verifier = new DirectoryJwtVerifier({
    readDirectory,
    clock: w.clock,
    logger: w.logger.child({ component: 'jwt-keys' }),
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    clockToleranceSeconds: config.jwtClockToleranceSeconds,
    maxLifetimeSeconds: config.jwtMaxLifetimeSeconds,
    minRefreshIntervalMs: config.jwtKeyRefreshMinIntervalMs,
    maxAgeMs: config.jwtKeyDirectoryMaxAgeMs,
  });
  return {
    verifier,
    authenticator: new TokenServiceClient({
      endpoints: config.tokenServiceEndpoints,
      requestTimeoutMs: config.requestTimeoutMs,
      ...(w.tokenServiceCredentials === undefined ? {} : { credentials: w.tokenServiceCredentials }),
    }),
  };
}

/** Outside issuers' tokens (GATEWAY_JWT_EXTERNAL_ISSUERS_FILE) go to their keys, the rest to `inner`. */
async function withExternalIssuers(w: Wiring, inner: TokenVerifier): Promise<TokenVerifier> {
  const { config } = w;
  if (config.jwtExternalIssuersFile === '') return inner;
  const issuers = parseExternalIssuers(await readFile(config.jwtExternalIssuersFile, 'utf8'));
  return ExternalJwtVerifier.create(inner, issuers, {
    clock: w.clock,
    logger: w.logger.child({ component: 'external-issuers' }),
    minRefreshIntervalMs: config.jwtExternalRefreshMinIntervalMs,
    maxAgeMs: config.jwtExternalMaxAgeMs,
    policy: {
      ttlMs: 1000,
      clockToleranceSeconds: config.jwtClockToleranceSeconds,
      maxTokenLengthChars: DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS,
      requireExpiry: config.jwtRequireExpiry,
      maxLifetimeSeconds: config.jwtMaxLifetimeSeconds,
      includeKeyIdHeader: true,
      clock: w.clock,
    },
  });
}

/** The etcd API: identity resolution, request execution, Authenticate, every service. */
async function wireApis(
  w: Wiring,
): Promise<{ table: readonly UnaryRpc[]; watch: WatchRelay; keepAlive: KeepAliveRelay; maintenance: MaintenanceApi; advertise: { url: string }; closeTokenService: () => void }> {
  const { config, cluster } = w;
  const ids = new RequestIds();
  const service = config.tokenServiceEndpoints.length > 0 ? tokenServiceParts(w, ids) : undefined;
  const local = tokenParts(w.tokenSetup, cluster, w.clock, w.rng, config, ids);
  const verifier = await withExternalIssuers(w, service?.verifier ?? local.verifier);
  const issuer = local.issuer;
  const authEnabled = async (signal?: Cancellation): Promise<boolean> => (await cluster.authCheck('', signal)).auth_enabled;
  const identities = new IdentityResolver(
    verifier,
    { authEnabled },
    config.clientCertAuth
      ? { authRevision: async (signal) => Number((await cluster.authCheck('', signal)).auth_revision), clock: w.clock, revisionCacheMs: config.tokenCacheMs }
      : undefined,
  );
  const maxReadEntryBytes = config.maxRequestBytes + READ_ENTRY_OVERHEAD_BYTES;
  const inFlight = new InFlightBounds({ perUser: config.maxInFlightPerUserCount, perAddress: config.maxInFlightPerAddressCount });
  const replica = config.readReplica ? startReadReplica(w) : undefined;
  const replicaReads =
    replica === undefined
      ? undefined
      : new ReplicaReads({ cluster, replica, catchUpWaitMs: config.readReplicaCatchUpWaitMs, maxWaitingReads: MAX_REPLICA_WAITING_READS });
  if (replica !== undefined && replicaReads !== undefined) {
    const counts = replicaReads.counts;
    w.metrics.trackReplica(() => ({ synced: replica.ready, appliedIndex: replica.appliedIndex, resyncs: replica.resyncCount, resumes: replica.resumeCount, moves: replica.moveCount, local: counts.local, fallback: counts.fallback }));
  }
  const transport = replicaReads ?? membersOnly(cluster);
  const executor = new RequestExecutor({ transport, identities, ids, maxRequestBytes: config.maxRequestBytes, maxReadEntryBytes, inFlight });
  const authenticator = service?.authenticator
    ? admitted(service.authenticator, w.admission)
    : new Authenticator({
      authCheck: (name, signal) => cluster.authCheck(name, signal),
      checker: await CredentialChecker.create(w.passwords),
      issuer,
      maxAttemptsCount: config.authenticateMaxAttemptsCount,
      logger: w.logger.child({ component: 'authenticate' }),
      hooks: w.deps.authenticateHooks,
      admission: w.admission,
    });
  const status = (signal?: Cancellation) => cluster.status(signal);
  const memberList = (signal?: Cancellation) => cluster.memberList(signal);
  const advertise = { url: config.advertiseClientUrl };
  const maintenance = new MaintenanceApi({
    executor,
    authEnabled,
    status,
    leaderStatus: (signal) => cluster.leaderStatus(signal),
    maintain: (request, signal) => cluster.maintain(request, signal),
    openSnapshot: (request, signal) => cluster.openSnapshot(request, signal),
  });
  const lease = new LeaseApi(executor, (request, signal) => cluster.lease(request, signal));
  const table = unaryRpcs({
    kv: new KvApi(executor, DEFAULT_KV_REQUEST_LIMITS),
    auth: new AuthApi({ executor, authenticator, passwords: w.passwords, status }),
    maintenance,
    cluster: new ClusterApi({ executor, authEnabled, status, memberList, memberChange: (request, signal) => cluster.memberChange(request, signal), advertisedClientUrl: () => advertise.url }),
    lease,
  });
  // One accounting for both kinds of stream: a caller's bound covers its Watch and keep-alive streams.
  const accounting = new StreamAccounting({
    streamsPerConnection: config.maxStreamsPerConnectionCount,
    streamsPerUser: config.maxStreamsPerUserCount,
    streamsPerAddress: config.maxStreamsPerAddressCount,
    watchersPerStream: config.maxWatchersPerStreamCount,
    watchersPerCaller: config.maxWatchersPerCallerCount,
  });
  const watch = new WatchRelay({
    openStream: () => cluster.openWatch(),
    identities,
    status,
    maxStreamsCount: config.maxWatchStreamsCount,
    accounting,
    idleTimeoutMs: config.streamIdleTimeoutMs,
    onStreamsChange: (count) => w.metrics.setWatchStreams(count),
  });
  const keepAlive = new KeepAliveRelay({ lease, maxStreamsCount: config.maxKeepAliveStreamsCount, accounting, identities, idleTimeoutMs: config.streamIdleTimeoutMs });
  const closeTokenService = (): void => {
    replica?.stop();
    service?.authenticator.close();
  };
  return { table, watch, keepAlive, maintenance, advertise, closeTokenService };
}

/**
 * Reads waiting for a read index or for the replica to reach one, at most (each also holds an
 * in-flight slot of its caller); beyond, reads go to the members.
 */
const MAX_REPLICA_WAITING_READS = 16_384;

/** The read replica, following a member from now on (reads go to the members until it syncs). */
function startReadReplica(w: Wiring): ReadReplica {
  const replica = new ReadReplica({
    open: (from) => w.cluster.openFollow(from, w.config.readReplicaMaxBytes, w.config.readReplicaFeedFromLeader),
    // Entries the members applied and sent: any that fits the channel's message limit decodes.
    maxEntryBytes: NODE_MAX_MESSAGE_BYTES,
    maxSnapshotBytes: w.config.readReplicaMaxBytes,
    maxWaiting: MAX_REPLICA_WAITING_READS,
    minRetryMs: 100,
    maxRetryMs: 5000,
    logger: w.logger.child({ component: 'replica' }),
    ...(w.config.readReplicaFeedFromLeader ? { leader: () => w.cluster.namedLeader?.id } : {}),
  });
  if (w.config.readReplicaFeedFromLeader) w.cluster.onLeaderNamed(() => replica.leaderChanged());
  replica.start();
  return replica;
}

/** The gRPC server with etcd's services and the fastify server with the JSON gateway (not listening yet). */
async function createServers(w: Wiring, table: readonly UnaryRpc[], watch: WatchRelay, keepAlive: KeepAliveRelay, maintenance: MaintenanceApi): Promise<{ grpc: GrpcServer; http: FastifyInstance; clientHttp: FastifyInstance; jsonGateway: ClientJsonGateway }> {
  const { config, logger } = w;
  const grpc = createGrpcServer({
    host: config.grpcHost,
    port: config.grpcPort,
    maxReceiveMessageBytes: grpcMaxReceiveBytes(config),
    maxSendMessageBytes: config.grpcMaxSendBytes,
    keepaliveTimeMs: config.grpcKeepaliveTimeMs,
    keepaliveTimeoutMs: config.grpcKeepaliveTimeoutMs,
    maxConcurrentStreams: config.grpcMaxConcurrentStreamsCount,
    logger,
    metrics: w.metrics.registry,
    mapError: mapGatewayError,
    credentials: serverCredentials(config, w.clientTls),
    serveUnaryDirectly: config.grpcServeUnaryDirectly,
  });
  registerEtcdServices(grpc, table, watch, keepAlive, maintenance);
  const logUnexpected = unexpectedErrorLog(logger, () => w.clock.monotonicMs());
  const httpOptions = {
    logger,
    metrics: w.metrics.registry,
    bodyLimitBytes: config.httpBodyLimitBytes,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    keepAliveTimeoutMs: 5000,
    readiness: w.readiness,
    mapError: (error: unknown) => httpErrorOf(error, logUnexpected),
  };
  const http = createHttpServer({ ...httpOptions, ...(config.httpTls && w.clientTls !== null ? { tls: { ...w.clientTls, requireClientCertificate: config.clientCertAuth } } : {}) });
  // The streaming routes go through the same relays as gRPC Watch and LeaseKeepAlive.
  const jsonGateway: ClientJsonGateway = {
    table,
    maxRequestMessageBytes: grpcMaxReceiveBytes(config),
    bodyLimitBytes: config.httpBodyLimitBytes,
    logUnexpected,
    streams: { watch, keepAlive, maintenance, stallTimeoutMs: config.httpStreamStallTimeoutMs, objectTimeoutMs: config.httpRequestTimeoutMs, extraHeaders: {} },
  };
  await registerJsonGateway(http, jsonGateway);
  // The client port's HTTP/1.1 side: no port of its own, TLS is the shared listener's.
  const clientHttp = createHttpServer({ ...httpOptions, timeoutCheckIntervalMs: CLIENT_HTTP_TIMEOUT_CHECK_INTERVAL_MS });
  return { grpc, http, clientHttp, jsonGateway };
}

/** A token-service's Authenticate behind this gateway's admission control (it sees the client's address). */
function admitted(inner: TokenServiceClient, admission: AuthenticateAdmission): Pick<Authenticator, 'authenticate'> {
  return {
    authenticate: (name, password, signal, address = '') =>
      admission.run<AuthenticateOutcome>({ user: name, address }, () => inner.authenticate(name, password, signal), (result) => {
        if (result.ok) return 'success';
        return isWireError(result.error, 'AuthFailed') ? 'failure' : 'neutral';
      }),
  };
}

type ClientJsonGateway = Parameters<typeof startClientPort>[0]['jsonGateway'];

/** Starts a gateway: connects nothing eagerly but the password tier, binds both ports. */
export async function createGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const logger = deps.logger ?? createLogger({ name: 'etcd-gateway', level: config.logLevel });
  const clock = deps.clock ?? systemClock;
  // TLS files are read first: a bad one fails the start before anything connects.
  const toNodes = nodeTls(config);
  const clientTls = clientPortTls(config);
  const tokenServiceCredentials = tokenServiceChannelCredentials(config);
  const tokenSetup = await createTokenSetup(config, clock);
  const tier =
    deps.passwordVerifier === undefined
      ? await createPasswordTier(config, { logger, clock, connectionName: `etcd-gateway:${process.pid}`, inProcess: () => inProcessPasswordTier(config) })
      : undefined;
  const rng = deps.rng ?? new CryptoRng();
  const cluster = createCluster(config, logger, clock, rng, toNodes);
  cluster.watchLeaders();
  const metrics = createGatewayMetrics(deps.collectProcessMetrics ?? false);
  const admission: AuthAdmission = await createAuthAdmission(config, {
    logger,
    clock,
    metrics: metrics.registry,
    ...(tier?.kind === 'queue' ? { redis: redisConnectionFromUrl(config.redisUrl, config.redisConnectTimeoutMs, `etcd-gateway-admission:${process.pid}`) } : {}),
  });
  const ready = leaderKnown(cluster, clock);
  const w: Wiring = {
    config,
    deps,
    logger,
    clock,
    rng,
    cluster,
    passwords: deps.passwordVerifier ?? tier!.verifier,
    tokenSetup,
    metrics,
    clientTls,
    tokenServiceCredentials,
    ready,
    readiness: async () => {
      const reasons: string[] = [];
      if (!(await ready())) reasons.push('no raft leader known');
      const passwords = tier?.health?.();
      if (passwords !== undefined && !passwords.ready) reasons.push(passwords.reason ?? 'password tier: not ready');
      return { ready: reasons.length === 0, reasons };
    },
    admission: admission.admission,
  };
  let servers: Awaited<ReturnType<typeof createServers>> | undefined;
  let clientPort: ClientPort | undefined;
  let grpcPort: number;
  let advertise: { url: string };
  let closeTokenService = (): void => undefined;
  try {
    const apis = await wireApis(w);
    advertise = apis.advertise;
    closeTokenService = apis.closeTokenService;
    servers = await createServers(w, apis.table, apis.watch, apis.keepAlive, apis.maintenance);
    clientPort = await startClientPort({
      host: config.grpcHost,
      port: config.grpcPort,
      tls: clientTls,
      requireClientCertificate: config.clientCertAuth,
      sniffTimeoutMs: config.clientPortSniffTimeoutMs,
      maxConnectionsCount: config.clientPortMaxConnectionsCount,
      grpc: servers.grpc,
      http: servers.clientHttp,
      jsonGateway: servers.jsonGateway,
      serverVersion: async () => (await cluster.status(AbortSignal.timeout(1000))).version,
      healthy: w.ready,
      logger,
    });
    grpcPort = clientPort.port;
    await servers.http.listen({ host: config.httpHost, port: config.httpPort });
  } catch (error) {
    await Promise.allSettled([clientPort?.close(0), servers?.grpc.stop(0), servers?.http.close(), tier?.close(), admission.close()]);
    closeTokenService();
    cluster.close();
    throw error;
  }
  const { grpc, http } = servers;
  const port = clientPort;
  const address = http.server.address();
  const httpPort = typeof address === 'object' && address !== null ? address.port : config.httpPort;
  if (advertise.url === '') advertise.url = `${servesTls(config) ? 'https' : 'http'}://${hostForUrl(config.grpcHost)}:${grpcPort}`;
  const passwordTier = tier?.kind ?? 'injected';
  const tokenType = config.tokenServiceEndpoints.length > 0 ? 'token-service' : tokenSetup.type;
  logger.info({ grpcPort, httpPort, tls: servesTls(config), clientCertAuth: config.clientCertAuth, tokenType, passwordTier, admissionStore: admission.store, nodes: config.nodeEndpoints }, 'etcd gateway started');
  let stopping: Promise<void> | undefined;
  return {
    grpcPort,
    httpPort,
    grpcAddress: `${hostForUrl(config.grpcHost)}:${grpcPort}`,
    httpAddress: `${hostForUrl(config.httpHost)}:${httpPort}`,
    get advertisedClientUrl() {
      return advertise.url;
    },
    tokenType,
    passwordTier,
    injectHttp: http.inject.bind(http),
    stop() {
      stopping ??= (async () => {
        await Promise.allSettled([port.close(config.shutdownGraceMs), grpc.stop(config.shutdownGraceMs), http.close()]);
        await tier?.close();
        await admission.close();
        closeTokenService();
        cluster.close();
        metrics.close();
        logger.info('etcd gateway stopped');
      })();
      return stopping;
    },
  };
}

function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** fastify errors outside the JSON routes' own handling (body too large, unparsable body). */
function httpErrorOf(error: unknown, logUnexpected: UnexpectedErrorLog): { statusCode: number; body: unknown } | undefined {
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  if (statusCode === 413) return { statusCode: 413, body: errorBody(8, 'request body too large') };
  if ((error as { grpcCode?: unknown }).grpcCode !== undefined) return httpError(error, logUnexpected);
  return undefined;
}

/** Ready while some member reports a leader; asked at most once a second. */
function leaderKnown(cluster: ClusterClient, clock: Clock): () => Promise<boolean> {
  return cachedProbe(async () => (await cluster.status(AbortSignal.timeout(1000))).leader_id !== '0', () => clock.monotonicMs());
}
