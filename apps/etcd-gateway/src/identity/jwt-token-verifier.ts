import { TokenError, type JwtTokenProvider } from '@ward/auth/tokens';
import type { Identity } from './identity';
import type { TokenVerifier } from './token-verifier';

/**
 * JWTs are checked locally (signature, alg pinning, exp, claims): stateless, like etcd. The claim
 * `revision` becomes the header's auth revision, so a token older than the latest auth change is
 * refused at apply with `revision of auth store is old`.
 */
export class JwtTokenVerifier implements TokenVerifier {
  constructor(private readonly provider: JwtTokenProvider) {}

  async verify(token: string): Promise<(Identity & { cached: boolean }) | undefined> {
    try {
      const { username, revision } = await this.provider.verify(token);
      return { username, authRevision: revision, cached: false };
    } catch (error) {
      if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_INVALID') return undefined;
      throw error;
    }
  }

  forget(): void {}
}
