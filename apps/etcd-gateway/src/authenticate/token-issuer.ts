// Issuing a token once the password checked out: a simple token is assigned through Raft (so every
// member, hence every gateway, knows it), a JWT is signed here.
import { formatSimpleToken, generateSimpleTokenPrefix, parseSimpleToken, sealSimpleTokenPrefix } from '@ward/auth/simple-tokens';
import { TokenError, type JwtTokenProvider } from '@ward/auth/tokens';
import type { Rng } from '@ward/shared/clock';
import { authenticateOperation, decodeEtcdMessage, encodeEtcdMessage } from '@ward/etcd/api-mapping';
import { encodeApplyRequest } from '@ward/etcd/apply';
import { wireError } from '@ward/etcd/wire-errors';
import type { IssuedToken, TokenIssuer } from '@ward/etcd/authenticate';
import type { RequestIds } from '../requests/request-ids';
import type { Cancellation } from '@ward/platform/grpc-server';

export type { IssuedToken, TokenIssuer };

const AUTHENTICATE_RESPONSE = 'etcdserverpb.AuthenticateResponse';

/**
 * Proposes etcd's `authenticate` with a fresh 16-letter prefix drawn from a strong Rng — sealed:
 * the log, the snapshots and the members only ever hold `<sealed>.<index>`, and the client gets
 * `<prefix>.<index>` back, which the gateway seals again whenever it is presented.
 */
export class SimpleTokenIssuer implements TokenIssuer {
  readonly revisionCheck = 'at-apply';

  constructor(
    private readonly propose: (entry: Uint8Array, signal?: Cancellation) => Promise<Buffer>,
    private readonly ids: RequestIds,
    private readonly rng: Rng,
  ) {}

  async issue(name: string, authRevision: number, signal?: Cancellation): Promise<IssuedToken> {
    const prefix = generateSimpleTokenPrefix(this.rng);
    const entry = encodeApplyRequest({
      // The revision the password was checked at travels along (etcd's header carries none).
      header: { id: this.ids.next(), username: '', authRevision },
      operation: authenticateOperation(name, sealSimpleTokenPrefix(prefix)),
    });
    const response = decodeEtcdMessage<{ token: string }>(AUTHENTICATE_RESPONSE, await this.propose(entry, signal));
    const assigned = parseSimpleToken(response.token);
    if (assigned === undefined) throw new TypeError('the cluster answered Authenticate with a malformed simple token');
    const token = formatSimpleToken(prefix, assigned.index);
    return { kind: 'response', bytes: Buffer.from(encodeEtcdMessage(AUTHENTICATE_RESPONSE, { ...response, token })) };
  }
}

/** Signs etcd's `{username, revision, exp}` with the configured key. */
export class JwtTokenIssuer implements TokenIssuer {
  readonly revisionCheck = 'before-issue';

  constructor(private readonly provider: JwtTokenProvider) {}

  async issue(name: string, authRevision: number): Promise<IssuedToken> {
    try {
      return { kind: 'token', token: await this.provider.sign({ username: name, revision: authRevision }) };
    } catch (error) {
      if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_VERIFY_ONLY') throw wireError('VerifyOnly');
      throw error;
    }
  }
}
