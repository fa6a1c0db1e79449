// createTokenService: the token-service as a started, stoppable service — wardtoken.Token over
// gRPC (Issue, Keys), the key set at /.well-known/jwks.json with /healthz, /readyz and /metrics
// over HTTP, the raft-node cluster behind for the AuthCheck reads. Replicas share nothing: each
// holds its own private keys.
import { readFile } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { CredentialChecker, inProcessPasswordTier } from '@ward/auth/password-hashing';
import type { PasswordTier, PasswordVerifier } from '@ward/auth/password-jobs';
import { createPasswordTier, redisConnectionFromUrl } from '@ward/auth/password-queue';
import { addressOfPeer, createAuthAdmission } from '@ward/auth/password-admission';
import { CryptoRng, isJwtSignMethod, type JwtSignMethod } from '@ward/auth/tokens';
import { Authenticator, passwordErrorWireName, type AuthenticateHooks, type TokenIssuer } from '@ward/etcd/authenticate';
import { wardTokenServiceDefinition, type IssueRequest__Output, type IssueResponse, type KeysResponse, type RevokeRequest__Output, type RevokeResponse } from '@ward/etcd/proto';
import { WIRE_ERRORS, isWireError, wireError } from '@ward/etcd/wire-errors';
import { createGrpcServer, loadTlsMaterial, tlsChannelCredentials, tlsServerCredentials, type CallContext, type GrpcServer, type GrpcStatusLike } from '@ward/platform/grpc-server';
import { cachedProbe, createHttpServer } from '@ward/platform/http-server';
import { createLogger, type Logger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { systemClock, type Clock, type Rng } from '@ward/shared/clock';
import { AuthReader } from './auth-reader';
import { jwksMaxAgeSeconds, type TokenServiceConfig } from './config';
import { JwtIssuer } from './jwt-issuer';
import { KeyPublisher } from './key-publisher';
import { KeyRing } from './key-ring';

/** A user name is at most this long (ward refuses longer ones; no such user exists). */
const MAX_NAME_BYTES = 64 * 1024;
/** How often the rotation schedule is checked at most (it also runs before every signature). */
const MAX_MAINTAIN_INTERVAL_MS = 1000;

export interface TokenServiceDeps {
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly rng?: Rng;
  /** Replaces the configured password tier (tests). */
  readonly passwordVerifier?: PasswordVerifier;
  readonly authenticateHooks?: AuthenticateHooks;
  readonly collectProcessMetrics?: boolean;
}

export interface TokenService {
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly grpcAddress: string;
  /** http://host:port of the JWKS, health and metrics server. */
  readonly httpUrl: string;
  /** The replica's keys (tests: rotation and revocation). */
  readonly keys: KeyRing;
  stop(): Promise<void>;
}

function nameOf(bytes: Buffer | null | undefined): string | undefined {
  if (bytes === null || bytes === undefined) return '';
  if (bytes.length > MAX_NAME_BYTES || !isUtf8(bytes)) return undefined;
  return bytes.toString('utf8');
}

function tokenParts(token: string): { keyId: string; expiresAtSeconds: number } {
  const [header, payload] = token.split('.');
  const { kid } = JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as { kid: string };
  const { exp } = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as { exp: number };
  return { keyId: kid, expiresAtSeconds: exp };
}

async function createKeyRing(config: TokenServiceConfig, clock: Clock): Promise<KeyRing> {
  const signMethod: JwtSignMethod = isJwtSignMethod(config.signMethod) ? config.signMethod : 'EdDSA';
  const operatorKey =
    config.privateKeyFile === '' ? undefined : { privateKeyPem: await readFile(config.privateKeyFile, 'utf8'), ...(config.keyId === '' ? {} : { keyId: config.keyId }) };
  return KeyRing.create({
    signMethod,
    clock,
    ttlMs: config.ttlSeconds * 1000,
    clockToleranceMs: config.clockToleranceSeconds * 1000,
    periodMs: config.rotationPeriodSeconds * 1000,
    ...(operatorKey === undefined ? {} : { operatorKey }),
  });
}

export async function createTokenService(config: TokenServiceConfig, deps: TokenServiceDeps = {}): Promise<TokenService> {
  const logger = deps.logger ?? createLogger({ name: 'token-service', level: config.logLevel });
  const clock = deps.clock ?? systemClock;
  const rng = deps.rng ?? new CryptoRng();
  // TLS files are read first: a bad one fails the start before anything connects.
  const { nodeCredentials, serverCredentials } = tlsOf(config);
  const ring = await createKeyRing(config, clock);
  const tier: PasswordTier | undefined =
    deps.passwordVerifier === undefined
      ? await createPasswordTier(config, { logger, clock, connectionName: `token-service:${process.pid}`, inProcess: () => inProcessPasswordTier(config) })
      : undefined;
  const passwords = deps.passwordVerifier ?? tier!.verifier;
  const reader = new AuthReader({
    endpoints: config.nodeEndpoints,
    requestTimeoutMs: config.requestTimeoutMs,
    retry: { maxAttemptsCount: config.retryMaxAttemptsCount, baseDelayMs: config.retryBaseDelayMs, maxDelayMs: config.retryMaxDelayMs },
    clock,
    rng,
    logger: logger.child({ component: 'cluster' }),
    ...(nodeCredentials === undefined ? {} : { credentials: nodeCredentials }),
  });
  const publisher = new KeyPublisher({ cluster: reader, ring, publishUser: config.publishUser, clock, logger: logger.child({ component: 'keys' }) });
  const issuer = new JwtIssuer({
    ring,
    clock,
    ttlMs: config.ttlSeconds * 1000,
    issuer: config.issuer,
    audience: config.audience,
    beforeSign: async (key) => {
      try {
        await publisher.ensure(key);
      } catch (error) {
        logger.warn({ err: error, keyId: key.keyId }, 'signing key could not be published; not signing');
        throw wireError('Unhealthy');
      }
    },
  });
  const metrics = createMetrics({ prefix: 'ward_token_service_', collectProcessMetrics: deps.collectProcessMetrics ?? false });
  const admission = await createAuthAdmission(config, {
    logger,
    clock,
    metrics,
    ...(tier?.kind === 'queue' ? { redis: redisConnectionFromUrl(config.redisUrl, config.redisConnectTimeoutMs, `token-service-admission:${process.pid}`) } : {}),
  });
  const checker = await CredentialChecker.create(passwords);
  const authenticatorWith = (tokenIssuer: TokenIssuer, component: string): Authenticator =>
    new Authenticator({
      authCheck: (name, signal) => reader.authCheck(name, signal),
      checker,
      issuer: tokenIssuer,
      maxAttemptsCount: config.authenticateMaxAttemptsCount,
      logger: logger.child({ component }),
      ...(deps.authenticateHooks === undefined ? {} : { hooks: deps.authenticateHooks }),
      admission: admission.admission,
    });
  const authenticator = authenticatorWith(issuer, 'issue');
  // Revoke proves the caller's password by the same rule, issuing nothing.
  const revokeAuthenticator = authenticatorWith({ revisionCheck: 'before-issue', issue: async () => ({ kind: 'token', token: '' }) }, 'revoke');
  const issued = metrics.counter({ name: 'issued_total', help: 'Issue calls by outcome', labelNames: ['outcome'] });
  const publishedKeys = metrics.gauge({ name: 'published_keys', help: 'public keys in the key set' });
  const maxAgeSeconds = jwksMaxAgeSeconds(config);
  // Ready while the cluster answers an AuthCheck; asked at most once a second.
  const clusterAnswers = cachedProbe(async () => {
    await reader.authCheck('', AbortSignal.timeout(1000));
    return true;
  }, () => clock.monotonicMs());

  // Every replica's keys in force (the directory as last read, and this replica's own).
  const keysAnswer = (): KeysResponse => ({
    keys: publisher.keysInForce().map((k) => ({
      key_id: k.keyId,
      alg: k.alg,
      jwk_json: k.publicJwk,
      not_before_seconds: String(k.notBeforeSeconds),
      retire_after_seconds: String(k.retireAfterSeconds),
    })),
    max_age_seconds: maxAgeSeconds,
  });

  const grpc: GrpcServer = createGrpcServer({
    host: config.grpcHost,
    port: config.grpcPort,
    maxReceiveMessageBytes: config.maxRequestBytes,
    maxSendMessageBytes: 1024 * 1024,
    keepaliveTimeMs: config.grpcKeepaliveTimeMs,
    keepaliveTimeoutMs: config.grpcKeepaliveTimeoutMs,
    maxConcurrentStreams: config.grpcMaxConcurrentStreamsCount,
    logger,
    metrics,
    // The password tier's failures (admission refusals included) as etcd's errors, as the gateway answers them.
    mapError: (error) => {
      const name = passwordErrorWireName(error);
      if (name === undefined) return undefined;
      const spec = WIRE_ERRORS[name];
      return { code: spec.code as GrpcStatusLike['code'], details: spec.message };
    },
    ...(serverCredentials === undefined ? {} : { credentials: serverCredentials }),
  });
  grpc.addService(wardTokenServiceDefinition(), {
    Issue: async (request: IssueRequest__Output, context: CallContext): Promise<IssueResponse> => {
      const name = nameOf(request.name);
      const password = new Uint8Array(request.password ?? new Uint8Array(0));
      try {
        if (name === undefined) throw wireError('AuthFailed');
        const outcome = await authenticator.authenticate(name, password, context.signal, addressOfPeer(context.peer));
        if (outcome.issued.kind !== 'token') throw new Error('the issuer answered without a token');
        const { keyId, expiresAtSeconds } = tokenParts(outcome.issued.token);
        issued.inc({ outcome: 'issued' });
        return { token: outcome.issued.token, auth_revision: String(outcome.authRevision), expires_at_seconds: String(expiresAtSeconds), key_id: keyId };
      } catch (error) {
        issued.inc({ outcome: 'refused' });
        throw error;
      } finally {
        password.fill(0);
        request.password?.fill(0);
      }
    },
    Keys: async (): Promise<KeysResponse> => keysAnswer(),
    Revoke: async (request: RevokeRequest__Output, context: CallContext): Promise<RevokeResponse> => {
      const name = nameOf(request.name);
      const password = new Uint8Array(request.password ?? new Uint8Array(0));
      try {
        if (name === undefined) throw wireError('AuthFailed');
        const { authRevision } = await revokeAuthenticator.authenticate(name, password, context.signal, addressOfPeer(context.peer));
        await publisher.revoke(request.key_id, name, authRevision, context.signal);
        context.logger.warn({ keyId: request.key_id, user: name }, 'signing key revoked');
        return {};
      } finally {
        password.fill(0);
        request.password?.fill(0);
      }
    },
  });

  const http: FastifyInstance = createHttpServer({
    logger,
    metrics,
    bodyLimitBytes: 1024,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    keepAliveTimeoutMs: 5000,
    readiness: async () => {
      const passwords = tier?.health?.();
      if (passwords !== undefined && !passwords.ready) return { ready: false, reasons: [passwords.reason ?? 'password tier: not ready'] };
      return publisher.upToDate && (await clusterAnswers());
    },
  });
  http.get('/.well-known/jwks.json', async (_request, reply) => {
    await ring.maintain();
    const keys = publisher.keysInForce().map((record) => JSON.parse(record.publicJwk) as Record<string, unknown>);
    return reply.header('cache-control', `public, max-age=${maxAgeSeconds}`).type('application/jwk-set+json').send({ keys });
  });

  const maintainEveryMs = Math.min(MAX_MAINTAIN_INTERVAL_MS, Math.max(100, Math.floor((config.rotationPeriodSeconds * 1000) / 4)));
  const maintainer = setInterval(() => {
    ring
      .maintain()
      .then(() => publisher.sync())
      .then(
        () => publishedKeys.set(ring.published().length),
        (error: unknown) => logger.warn({ err: error }, 'key rotation or publication failed; retried'),
      );
  }, maintainEveryMs);
  maintainer.unref();
  const revocationChecker = setInterval(() => {
    publisher.checkRevocations().catch((error: unknown) => {
      if (!isWireError(error, 'Stopped')) logger.warn({ err: error }, 'reading the key directory failed; retried');
    });
  }, config.directoryCheckIntervalMs);
  revocationChecker.unref();
  publishedKeys.set(ring.published().length);
  // The first keys are published before the service answers (retried by the timer if the cluster is not up yet).
  await publisher.sync().catch((error: unknown) => logger.warn({ err: error }, 'publishing the signing keys failed; retried'));
  // The other replicas' keys, for the key set served here (read again with every revocation check).
  await publisher.checkRevocations().catch((error: unknown) => logger.warn({ err: error }, 'reading the key directory failed; retried'));

  let grpcPort: number;
  try {
    grpcPort = await grpc.start();
    await http.listen({ host: config.httpHost, port: config.httpPort });
  } catch (error) {
    clearInterval(maintainer);
    clearInterval(revocationChecker);
    await Promise.allSettled([grpc.stop(0), http.close(), tier?.close(), admission.close()]);
    reader.close();
    throw error;
  }
  const address = http.server.address();
  const httpPort = typeof address === 'object' && address !== null ? address.port : config.httpPort;
  logger.info({ grpcPort, httpPort, signMethod: config.signMethod, rotates: ring.rotates, keys: ring.published().map((k) => k.keyId), passwordTier: tier?.kind ?? 'injected' }, 'token service started');
  let stopping: Promise<void> | undefined;
  return {
    grpcPort,
    httpPort,
    grpcAddress: `${hostForUrl(config.grpcHost)}:${grpcPort}`,
    httpUrl: `http://${hostForUrl(config.httpHost)}:${httpPort}`,
    keys: ring,
    stop() {
      stopping ??= (async () => {
        clearInterval(maintainer);
        clearInterval(revocationChecker);
        await Promise.allSettled([grpc.stop(config.shutdownGraceMs), http.close()]);
        await tier?.close();
        await admission.close();
        reader.close();
        logger.info('token service stopped');
      })();
      return stopping;
    },
  };
}

/** Channel credentials towards mutual-TLS raft-nodes, and the gRPC port's own TLS. */
function tlsOf(config: TokenServiceConfig) {
  const nodeCredentials =
    config.nodeTlsCertFile === ''
      ? undefined
      : tlsChannelCredentials(
          loadTlsMaterial({
            certFile: config.nodeTlsCertFile,
            keyFile: config.nodeTlsKeyFile,
            caFile: config.nodeTlsCaFile,
            names: { cert: 'TOKEN_SERVICE_NODE_TLS_CERT_FILE', key: 'TOKEN_SERVICE_NODE_TLS_KEY_FILE', ca: 'TOKEN_SERVICE_NODE_TLS_CA_FILE' },
          }),
        );
  const serverCredentials =
    config.certFile === ''
      ? undefined
      : tlsServerCredentials(
          loadTlsMaterial({ certFile: config.certFile, keyFile: config.keyFile, caFile: config.clientCaFile, names: { cert: 'TOKEN_SERVICE_CERT_FILE', key: 'TOKEN_SERVICE_KEY_FILE', ca: 'TOKEN_SERVICE_CLIENT_CA_FILE' } }),
          config.clientCaFile !== '',
        );
  return { nodeCredentials, serverCredentials };
}

function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

