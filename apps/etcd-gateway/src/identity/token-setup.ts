// The token type from the config (etcd's --auth-token syntax): simple tokens resolved through the
// cluster, or JWTs with jose (issue + verify, or verify only with just a public key).
import { readFile } from 'node:fs/promises';
import {
  DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS,
  JwtTokenProvider,
  jwtKeyConfigFromOption,
  parseAuthTokenOption,
  type JwtKeyConfig,
} from '@ward/auth/tokens';
import type { Clock } from '@ward/shared/clock';
import type { GatewayConfig } from '../config';

export type TokenSetup = { readonly type: 'simple' } | { readonly type: 'jwt'; readonly provider: JwtTokenProvider };

async function readBytes(path: string): Promise<Uint8Array> {
  return new Uint8Array(await readFile(path));
}

/** A further verification key: a PEM public key, or for HS* methods the raw secret bytes (etcd's rule). */
async function verificationKey(signMethod: string, path: string): Promise<JwtKeyConfig> {
  const bytes = await readBytes(path);
  if (signMethod.startsWith('HS')) return { signMethod, secret: bytes };
  return { signMethod, publicKeyPem: Buffer.from(bytes).toString('utf8') };
}

/** Loads keys and checks them; a bad option or key stops the boot (etcd refuses to start too). */
export async function createTokenSetup(config: GatewayConfig, clock: Clock): Promise<TokenSetup> {
  const option = parseAuthTokenOption(config.authToken);
  if (option.type !== 'jwt') return { type: 'simple' };
  const primary = await jwtKeyConfigFromOption(option, readBytes);
  const verificationKeys = await Promise.all(config.jwtVerificationKeyFiles.map((path) => verificationKey(option.signMethod, path)));
  const provider = await JwtTokenProvider.create({
    primary,
    verificationKeys,
    policy: {
      ttlMs: option.ttlMs,
      clockToleranceSeconds: config.jwtClockToleranceSeconds,
      maxTokenLengthChars: DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS,
      requireExpiry: config.jwtRequireExpiry,
      maxLifetimeSeconds: Math.max(config.jwtMaxLifetimeSeconds, Math.ceil(option.ttlMs / 1000)),
      // etcd's header is {alg, typ}; a kid would only help rotation, which tries every key of the alg.
      includeKeyIdHeader: false,
      clock,
    },
  });
  return { type: 'jwt', provider };
}
