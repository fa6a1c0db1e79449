// The sign methods etcd resolves by name through golang-jwt (`sign-method=` in `--auth-token`).
// EdDSA exists from etcd 3.6; the rest since 3.2.

export const JWT_SIGN_METHODS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'HS256',
  'HS384',
  'HS512',
] as const;

export type JwtSignMethod = (typeof JWT_SIGN_METHODS)[number];

/** What key a method needs. */
export type KeyRequirement =
  | { readonly family: 'rsa'; readonly minModulusBits: number }
  | { readonly family: 'ec'; readonly nodeCurve: 'prime256v1' | 'secp384r1' | 'secp521r1' }
  | { readonly family: 'ed25519' }
  | { readonly family: 'hmac'; readonly minSecretBytes: number };

/** RSA keys below 2048 bits are refused (jose refuses them too; NIST SP 800-131A). */
export const MIN_RSA_MODULUS_BITS = 2048;

export function isJwtSignMethod(value: string): value is JwtSignMethod {
  return (JWT_SIGN_METHODS as readonly string[]).includes(value);
}

/**
 * RFC 7518 §3.2: an HMAC key at least as long as the hash output; ES curves per §3.4; RSA per
 * §3.3/§3.5 (2048 bits at least).
 */
export function keyRequirementOf(method: JwtSignMethod): KeyRequirement {
  switch (method) {
    case 'RS256':
    case 'RS384':
    case 'RS512':
    case 'PS256':
    case 'PS384':
    case 'PS512':
      return { family: 'rsa', minModulusBits: MIN_RSA_MODULUS_BITS };
    case 'ES256':
      return { family: 'ec', nodeCurve: 'prime256v1' };
    case 'ES384':
      return { family: 'ec', nodeCurve: 'secp384r1' };
    case 'ES512':
      return { family: 'ec', nodeCurve: 'secp521r1' };
    case 'EdDSA':
      return { family: 'ed25519' };
    case 'HS256':
      return { family: 'hmac', minSecretBytes: 32 };
    case 'HS384':
      return { family: 'hmac', minSecretBytes: 48 };
    case 'HS512':
      return { family: 'hmac', minSecretBytes: 64 };
  }
}
