// Verify-only trust in outside JWT issuers (the seeds' "directly setting JWT tokens" workflow with
// a real authority): each is named by its iss, must put the gateway's aud in its tokens, may sign
// only with the algorithms listed, and its keys come from a key file or from its JWKS URL — a URL
// in the configuration, never one a token names. A JWKS is fetched with a timeout and a size
// bound, cached, and fetched again when a token names a kid it lacks or when it is old, at most
// once per minimum interval per issuer.
import { readFile } from 'node:fs/promises';
import { JWT_SIGN_METHODS, KEY_ID_PATTERN, TokenError, loadJwtKey, loadPublicJwk, verifyJwt, type JwtKey, type JwtPolicy, type JwtSignMethod } from '@ward/auth/tokens';
import type { Logger } from '@ward/platform/logging';
import type { Clock } from '@ward/shared/clock';
import type { Identity } from './identity';
import type { TokenVerifier } from './token-verifier';
import type { Cancellation } from '@ward/platform/grpc-server';

/** Outside issuers configured at most. */
export const MAX_EXTERNAL_ISSUERS = 8;
/** Largest JWKS document read. */
export const MAX_JWKS_BYTES = 64 * 1024;
/** Keys taken from one JWKS at most. */
export const MAX_JWKS_KEYS = 32;
/** A JWKS fetch gives up after this. */
export const JWKS_FETCH_TIMEOUT_MS = 5000;

export interface ExternalIssuerConfig {
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly JwtSignMethod[];
  readonly jwksUrl?: string;
  readonly keyFile?: string;
  readonly keyId?: string;
}

const ASYMMETRIC = JWT_SIGN_METHODS.filter((method) => !method.startsWith('HS'));

function fail(detail: string): never {
  throw new TypeError(`GATEWAY_JWT_EXTERNAL_ISSUERS_FILE: ${detail}`);
}

/** The issuers file (a JSON array), checked: every rule a bad entry breaks stops the boot. */
export function parseExternalIssuers(text: string): ExternalIssuerConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail('not JSON');
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_EXTERNAL_ISSUERS) fail(`a JSON array of 1 to ${MAX_EXTERNAL_ISSUERS} issuers`);
  const seen = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const at = `issuer ${index}`;
    if (typeof entry !== 'object' || entry === null) fail(`${at} is not an object`);
    const { issuer, audience, algorithms, jwksUrl, keyFile, keyId } = entry as Record<string, unknown>;
    if (typeof issuer !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(issuer)) fail(`${at}: issuer must be printable, 1-256 characters`);
    if (seen.has(issuer)) fail(`${at}: issuer ${issuer} twice`);
    seen.add(issuer);
    if (typeof audience !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(audience)) fail(`${at}: audience must be printable, 1-256 characters`);
    if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((alg) => (ASYMMETRIC as readonly unknown[]).includes(alg))) {
      fail(`${at}: algorithms must list asymmetric JWT algorithms (${ASYMMETRIC.join(', ')})`);
    }
    if ((jwksUrl === undefined) === (keyFile === undefined)) fail(`${at}: exactly one of jwksUrl and keyFile`);
    if (jwksUrl !== undefined && (typeof jwksUrl !== 'string' || !/^https?:\/\/\S{1,2000}$/.test(jwksUrl))) fail(`${at}: jwksUrl must be an http(s) URL`);
    if (keyFile !== undefined && (typeof keyFile !== 'string' || keyFile.length === 0 || keyFile.length > 4096)) fail(`${at}: keyFile must be a path`);
    if (keyId !== undefined && (typeof keyId !== 'string' || !KEY_ID_PATTERN.test(keyId))) fail(`${at}: keyId must match [A-Za-z0-9._-]{1,64}`);
    return {
      issuer,
      audience,
      algorithms: algorithms as JwtSignMethod[],
      ...(jwksUrl === undefined ? {} : { jwksUrl: jwksUrl as string }),
      ...(keyFile === undefined ? {} : { keyFile: keyFile as string }),
      ...(keyId === undefined ? {} : { keyId: keyId as string }),
    };
  });
}

interface IssuerState {
  readonly config: ExternalIssuerConfig;
  keys: JwtKey[];
  fetchedAtMs: number;
  lastFetchStartMs: number;
  fetching: Promise<void> | undefined;
}

export interface ExternalIssuerOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Two fetches of one issuer's JWKS are at least this far apart. */
  readonly minRefreshIntervalMs: number;
  /** A JWKS older than this is fetched again at the next token. */
  readonly maxAgeMs: number;
  readonly policy: JwtPolicy;
}

/** Tokens whose (unverified) iss names a configured issuer go to its keys; the rest to `inner`. */
export class ExternalJwtVerifier implements TokenVerifier {
  private readonly issuers = new Map<string, IssuerState>();

  private constructor(
    private readonly inner: TokenVerifier,
    private readonly options: ExternalIssuerOptions,
  ) {}

  /** Loads key files (a bad one stops the boot); JWKS URLs are fetched at the first token. */
  static async create(inner: TokenVerifier, configs: readonly ExternalIssuerConfig[], options: ExternalIssuerOptions): Promise<ExternalJwtVerifier> {
    const verifier = new ExternalJwtVerifier(inner, options);
    for (const config of configs) {
      const state: IssuerState = { config, keys: [], fetchedAtMs: -Infinity, lastFetchStartMs: -Infinity, fetching: undefined };
      if (config.keyFile !== undefined) {
        const publicKeyPem = await readFile(config.keyFile, 'utf8');
        for (const signMethod of config.algorithms) {
          state.keys.push(
            await loadJwtKey({ signMethod, publicKeyPem, expectedIssuer: config.issuer, expectedAudience: config.audience, ...(config.keyId === undefined ? {} : { keyId: config.keyId }) }),
          );
        }
      }
      verifier.issuers.set(config.issuer, state);
    }
    return verifier;
  }

  async verify(token: string, signal?: Cancellation): Promise<(Identity & { cached: boolean }) | undefined> {
    const { iss, kid } = peek(token);
    const state = iss === undefined ? undefined : this.issuers.get(iss);
    if (state === undefined) return this.inner.verify(token, signal);
    if (kid !== undefined && !KEY_ID_PATTERN.test(kid)) return undefined;
    if (state.config.jwksUrl !== undefined) await this.refreshIfNeeded(state, kid);
    try {
      const { username, revision } = await verifyJwt(token, state.keys, this.options.policy);
      return { username, authRevision: revision, cached: false };
    } catch (error) {
      if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_INVALID') {
        this.options.logger.debug({ issuer: state.config.issuer, reason: error.reason, claim: error.claim }, 'external token refused');
        return undefined;
      }
      throw error;
    }
  }

  forget(token: string): void {
    this.inner.forget(token);
  }

  private async refreshIfNeeded(state: IssuerState, kid: string | undefined): Promise<void> {
    const nowMs = this.options.clock.monotonicMs();
    const stale = nowMs - state.fetchedAtMs >= this.options.maxAgeMs || (kid !== undefined && !state.keys.some((key) => key.keyId === kid));
    if (!stale) return;
    if (state.fetching === undefined && nowMs - state.lastFetchStartMs < this.options.minRefreshIntervalMs) return;
    state.fetching ??= this.fetchJwks(state).finally(() => (state.fetching = undefined));
    await state.fetching;
  }

  /** Fetches and loads the issuer's JWKS; a failure keeps the keys held. */
  private async fetchJwks(state: IssuerState): Promise<void> {
    const { config } = state;
    state.lastFetchStartMs = this.options.clock.monotonicMs();
    try {
      const response = await fetch(config.jwksUrl!, { signal: AbortSignal.timeout(JWKS_FETCH_TIMEOUT_MS), redirect: 'error', headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`JWKS answered HTTP ${response.status}`);
      const text = await readBounded(response, MAX_JWKS_BYTES);
      const document = JSON.parse(text) as { keys?: unknown };
      if (!Array.isArray(document.keys)) throw new Error('JWKS has no keys array');
      const keys: JwtKey[] = [];
      for (const jwk of document.keys.slice(0, MAX_JWKS_KEYS) as Array<Record<string, unknown>>) {
        const alg = typeof jwk['alg'] === 'string' ? jwk['alg'] : config.algorithms.length === 1 ? config.algorithms[0] : undefined;
        const keyId = jwk['kid'];
        if (alg === undefined || !(config.algorithms as readonly string[]).includes(alg) || typeof keyId !== 'string' || !KEY_ID_PATTERN.test(keyId)) continue;
        if (jwk['use'] !== undefined && jwk['use'] !== 'sig') continue;
        try {
          keys.push(await loadPublicJwk({ signMethod: alg, jwk, keyId, expectedIssuer: config.issuer, expectedAudience: config.audience }));
        } catch (error) {
          this.options.logger.warn({ issuer: config.issuer, keyId, err: error }, 'unusable key in an issuer’s JWKS; ignored');
        }
      }
      state.keys = keys;
      state.fetchedAtMs = this.options.clock.monotonicMs();
    } catch (error) {
      this.options.logger.warn({ issuer: config.issuer, err: error }, 'fetching an issuer’s JWKS failed; keeping its keys');
    }
  }
}

/** The body as text, refusing more than `maxBytes`. */
async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw new Error('JWKS too large');
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error('JWKS too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The unverified iss and kid, only to route the token. */
function peek(token: string): { iss: string | undefined; kid: string | undefined } {
  try {
    const [header, payload] = token.split('.');
    if (payload === undefined) return { iss: undefined, kid: undefined };
    const { kid } = JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as { kid?: unknown };
    const { iss } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown };
    return { iss: typeof iss === 'string' ? iss : undefined, kid: typeof kid === 'string' ? kid : undefined };
  } catch {
    return { iss: undefined, kid: undefined };
  }
}
