import { wireError } from '@ward/etcd/wire-errors';
import type { Clock } from '@ward/shared/clock';
import { ANONYMOUS, type Credentials, type ResolvedIdentity } from './identity';
import { MAX_TOKEN_LENGTH_CHARS } from './token-extraction';
import type { TokenVerifier } from './token-verifier';
import type { Cancellation } from '@ward/platform/grpc-server';

/** Whether auth is enabled right now (a linearizable read at the cluster). */
export interface AuthEnabledProbe {
  authEnabled(signal?: Cancellation): Promise<boolean>;
}

/** Client-certificate identities (etcd's --client-cert-auth): where the current auth revision comes from. */
export interface CertificateIdentityOptions {
  /** The auth store's current revision (a read at the leader). */
  readonly authRevision: (signal?: Cancellation) => Promise<number>;
  readonly clock: Clock;
  /** A revision read is reused this long; a request it makes stale is retried with a fresh one. */
  readonly revisionCacheMs: number;
}

const ANONYMOUS_IDENTITY: ResolvedIdentity = Object.freeze({ ...ANONYMOUS, cached: false });

/**
 * etcd's AuthInfoFromTLS: the CommonName of the verified client certificate, at the auth revision
 * current when the request arrives. The name needs no lookup (the certificate proves it), so only
 * the revision is read, and reused for `revisionCacheMs`: a request stamped with a revision that an
 * auth change has passed is refused at apply (`revision of auth store is old`) and retried fresh.
 */
class CertificateIdentities {
  private revision: { value: number; atMs: number } | undefined;
  private reading: Promise<number> | undefined;

  constructor(private readonly options: CertificateIdentityOptions) {}

  async identify(commonName: string, fresh: boolean, signal?: Cancellation): Promise<ResolvedIdentity> {
    const cached = this.revision;
    if (!fresh && cached !== undefined && this.options.clock.monotonicMs() - cached.atMs < this.options.revisionCacheMs) {
      return { username: commonName, authRevision: cached.value, cached: true };
    }
    signal?.throwIfAborted();
    return { username: commonName, authRevision: await this.read(), cached: false };
  }

  forget(): void {
    this.revision = undefined;
  }

  /**
   * One read at a time: callers arriving while it runs share it. It takes no caller's signal (one
   * caller giving up must not fail the others); the cluster client bounds it by its own timeout.
   */
  private read(): Promise<number> {
    this.reading ??= (async () => {
      const atMs = this.options.clock.monotonicMs();
      try {
        const value = await this.options.authRevision();
        this.revision = { value, atMs };
        return value;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}

/**
 * etcd's AuthInfoFromCtx, as 3.7 behaves: a valid token → its identity; an invalid token →
 * `invalid auth token` — unless auth is disabled, when tokens are ignored. Without a (used) token,
 * a gRPC call over TLS with a verified client certificate is its CommonName when certificate
 * identities are on (etcd's --client-cert-auth); otherwise there is no identity. The enabled flag
 * is asked for (linearizably) only when a token fails, and never cached: right after AuthEnable an
 * invalid token must already be refused. Tokens sent while auth is disabled are rare (clients get
 * no token then), so the extra read costs little.
 */
export class IdentityResolver {
  private readonly certificates: CertificateIdentities | undefined;

  constructor(
    private readonly verifier: TokenVerifier,
    private readonly probe: AuthEnabledProbe,
    certificates?: CertificateIdentityOptions,
  ) {
    this.certificates = certificates === undefined ? undefined : new CertificateIdentities(certificates);
  }

  /**
   * `fresh`: a certificate identity gets a revision read now rather than a reused one (for a
   * watch create, which the member would otherwise cancel, not retry, were the revision passed).
   */
  async identify(credentials: Credentials, signal?: Cancellation, options: { readonly fresh?: boolean } = {}): Promise<ResolvedIdentity> {
    const { token } = credentials;
    if (token !== undefined) {
      const identity = token.length <= MAX_TOKEN_LENGTH_CHARS ? await this.verifier.verify(token, signal) : undefined;
      if (identity !== undefined) return identity;
      if (await this.probe.authEnabled(signal)) throw wireError('InvalidAuthToken');
    }
    const { commonName } = credentials;
    if (commonName === undefined || this.certificates === undefined) return ANONYMOUS_IDENTITY;
    return this.certificates.identify(commonName, options.fresh === true, signal);
  }

  /**
   * The user a stream is counted against (per-caller stream bounds): its token's user, else its
   * certificate's CommonName when certificate identities are on, else '' (anonymous, counted by
   * address). Decides no access: an invalid token is simply anonymous here, without the
   * auth-enabled read that `identify` makes, so a flood of bad tokens costs no extra read.
   */
  async callerName(credentials: Credentials, signal?: Cancellation): Promise<string> {
    const { token } = credentials;
    if (token !== undefined) {
      const identity = token.length <= MAX_TOKEN_LENGTH_CHARS ? await this.verifier.verify(token, signal) : undefined;
      return identity?.username ?? '';
    }
    const { commonName } = credentials;
    return commonName === undefined || this.certificates === undefined ? '' : commonName;
  }

  /** The cluster said the identity's revision is old: resolve it afresh next time. */
  forget(credentials: Credentials): void {
    if (credentials.token !== undefined) this.verifier.forget(credentials.token);
    else this.certificates?.forget();
  }
}
