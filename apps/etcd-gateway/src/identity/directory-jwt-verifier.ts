// JWTs of the token-service, verified against the cluster's signing-key directory (published by
// the token-service replicas through the log). The directory is cached; it is read again
// - when a token names a kid the cache does not hold (a key published since),
// - when a token carries an auth revision newer than the one the cache was read at (revoking a
//   key bumps the auth revision, so a token minted after a revocation always makes the gateway
//   look again, and a revoked key's tokens are refused on every gateway at their next request),
// - when the cache is older than maxAgeMs.
// Reads are shared (one at a time) and rate-bounded (minRefreshIntervalMs apart): a token that
// needs a read waits for the next one, so garbage kids or revisions cannot make a gateway hammer
// the cluster, and a legitimate token is never refused for arriving just after another read. A key verifies only within [notBefore, retireAfter] ± the clock tolerance, and only
// tokens with the configured iss and aud.
import { DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS, KEY_ID_PATTERN, TokenError, loadPublicJwk, verifyJwt, type JwtKey, type JwtPolicy } from '@ward/auth/tokens';
import type { SigningKeyRecord } from '@ward/etcd/apply';
import type { Logger } from '@ward/platform/logging';
import type { Clock } from '@ward/shared/clock';
import type { Identity } from './identity';
import type { TokenVerifier } from './token-verifier';

/** The directory as read from the cluster, with the auth revision it was read at. */
export interface SigningKeyDirectoryRead {
  readonly keys: readonly SigningKeyRecord[];
  readonly authRevision: number;
}

export interface DirectoryJwtVerifierOptions {
  readonly readDirectory: () => Promise<SigningKeyDirectoryRead>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Tokens must carry this iss and aud. */
  readonly issuer: string;
  readonly audience: string;
  readonly clockToleranceSeconds: number;
  readonly maxLifetimeSeconds: number;
  /** Two directory reads are at least this far apart. */
  readonly minRefreshIntervalMs: number;
  /** A cached directory older than this is read again at the next token. */
  readonly maxAgeMs: number;
  /** Further keys trusted as they are (external issuers), each with its own iss/aud. */
  readonly staticKeys?: readonly JwtKey[];
}

interface CachedKey {
  readonly record: SigningKeyRecord;
  readonly key: JwtKey;
}

interface Cache {
  readonly keys: ReadonlyMap<string, CachedKey>;
  readonly authRevision: number;
  readonly readAtMs: number;
}

/** The unverified header kid and claim revision, only to decide whether to read the directory. */
function peek(token: string): { kid: string | undefined; revision: number | undefined } {
  try {
    const [header, payload] = token.split('.');
    const kid = (JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    const revision = (JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { revision?: unknown }).revision;
    return { kid: typeof kid === 'string' ? kid : undefined, revision: typeof revision === 'number' ? revision : undefined };
  } catch {
    return { kid: undefined, revision: undefined };
  }
}

export class DirectoryJwtVerifier implements TokenVerifier {
  private cache: Cache | undefined;
  private reading: Promise<void> | undefined;
  private lastReadStartMs = -Infinity;
  private readonly policy: JwtPolicy;
  /** Directory reads done (tests and metrics). */
  readsCount = 0;

  constructor(private readonly options: DirectoryJwtVerifierOptions) {
    this.policy = {
      ttlMs: 1000,
      clockToleranceSeconds: options.clockToleranceSeconds,
      maxTokenLengthChars: DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS,
      requireExpiry: true,
      maxLifetimeSeconds: options.maxLifetimeSeconds,
      includeKeyIdHeader: true,
      clock: options.clock,
    };
  }

  async verify(token: string): Promise<(Identity & { cached: boolean }) | undefined> {
    if (token.length > this.policy.maxTokenLengthChars) return undefined;
    const { kid, revision } = peek(token);
    // A kid no key can have is refused before anything is looked up.
    if (kid !== undefined && !KEY_ID_PATTERN.test(kid)) return undefined;
    const staticMatch = kid !== undefined && this.options.staticKeys?.some((key) => key.keyId === kid);
    if (!staticMatch) await this.refreshIfNeeded(kid, revision);
    try {
      const { username, revision: authRevision } = await verifyJwt(token, this.usableKeys(), this.policy);
      return { username, authRevision, cached: false };
    } catch (error) {
      if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_INVALID') {
        this.options.logger.debug({ reason: error.reason, claim: error.claim }, 'token refused');
        return undefined;
      }
      throw error;
    }
  }

  forget(): void {}

  /** The directory's keys in their window, and the static ones. */
  private usableKeys(): JwtKey[] {
    const keys: JwtKey[] = [...(this.options.staticKeys ?? [])];
    for (const { record, key } of this.cache?.keys.values() ?? []) if (this.inWindow(record)) keys.push(key);
    return keys;
  }

  /** Whether a directory key verifies now: within [notBefore, retireAfter] ± the clock tolerance. */
  private inWindow(record: SigningKeyRecord | undefined): boolean {
    if (record === undefined) return false;
    const nowSeconds = this.options.clock.nowMs() / 1000;
    const tolerance = this.options.clockToleranceSeconds;
    if (record.notBeforeSeconds - tolerance > nowSeconds) return false;
    return record.retireAfterSeconds === 0 || record.retireAfterSeconds + tolerance > nowSeconds;
  }

  private async refreshIfNeeded(kid: string | undefined, revision: number | undefined): Promise<void> {
    const cache = this.cache;
    const nowMs = this.options.clock.monotonicMs();
    // A token newer than the cached directory may follow a revocation: never verified without a read.
    const newer = cache !== undefined && revision !== undefined && revision > cache.authRevision;
    // A kid not held, or held outside its window (its times may have changed since: a revocation
    // moves the replica's next key forward), is looked up again.
    const unusable = kid !== undefined && !this.inWindow(cache?.keys.get(kid)?.record);
    const stale = cache === undefined || newer || unusable || nowMs - cache.readAtMs >= this.options.maxAgeMs;
    if (!stale) return;
    const waitMs = this.lastReadStartMs + this.options.minRefreshIntervalMs - nowMs;
    if (this.reading === undefined && waitMs > 0) {
      // Rate-bounded: the token waits for the next read (at most one interval), shared by every
      // token waiting meanwhile; garbage kids cost their senders latency, the cluster nothing.
      const readsBefore = this.readsCount;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      // A read started since this token arrived answers for it (whatever it claims).
      if (this.readsCount !== readsBefore) return this.reading;
    }
    await this.read();
  }

  /** One read at a time; callers arriving meanwhile share it. A failed read keeps the old cache. */
  private read(): Promise<void> {
    this.reading ??= (async () => {
      this.lastReadStartMs = this.options.clock.monotonicMs();
      this.readsCount += 1;
      try {
        const directory = await this.options.readDirectory();
        const keys = new Map<string, CachedKey>();
        for (const record of directory.keys) {
          const previous = this.cache?.keys.get(record.keyId);
          if (previous !== undefined && previous.record.publicJwk === record.publicJwk && previous.record.alg === record.alg) {
            keys.set(record.keyId, { record, key: previous.key });
            continue;
          }
          try {
            const key = await loadPublicJwk({ signMethod: record.alg, jwk: JSON.parse(record.publicJwk), keyId: record.keyId, expectedIssuer: this.options.issuer, expectedAudience: this.options.audience });
            keys.set(record.keyId, { record, key });
          } catch (error) {
            this.options.logger.warn({ keyId: record.keyId, err: error }, 'unusable key in the signing-key directory; ignored');
          }
        }
        this.cache = { keys, authRevision: directory.authRevision, readAtMs: this.lastReadStartMs };
      } catch (error) {
        this.options.logger.warn({ err: error }, 'reading the signing-key directory failed; keeping the cached keys');
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}
