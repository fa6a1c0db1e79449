// Fresh signing keys for a token issuer that holds its own (no private key leaves the process
// that generated it; only the public half is published).
import { generateKeyPairSync } from 'node:crypto';
import { TokenError } from './errors';
import { keyRequirementOf, type JwtSignMethod } from './sign-method';

/** RSA keys generated for RS and PS methods. */
export const GENERATED_RSA_MODULUS_BITS = 3072;

export interface GeneratedKeyPem {
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

/** A new key pair for `alg` in PEM (PKCS#8 private, SPKI public). HMAC methods have no key pair. */
export function generateJwtKeyPem(alg: JwtSignMethod): GeneratedKeyPem {
  const requirement = keyRequirementOf(alg);
  const publicKeyEncoding = { type: 'spki', format: 'pem' } as const;
  const privateKeyEncoding = { type: 'pkcs8', format: 'pem' } as const;
  switch (requirement.family) {
    case 'ed25519': {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519', { publicKeyEncoding, privateKeyEncoding });
      return { privateKeyPem: privateKey, publicKeyPem: publicKey };
    }
    case 'ec': {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: requirement.nodeCurve, publicKeyEncoding, privateKeyEncoding });
      return { privateKeyPem: privateKey, publicKeyPem: publicKey };
    }
    case 'rsa': {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: Math.max(GENERATED_RSA_MODULUS_BITS, requirement.minModulusBits), publicKeyEncoding, privateKeyEncoding });
      return { privateKeyPem: privateKey, publicKeyPem: publicKey };
    }
    case 'hmac':
      throw new TokenError('ERR_AUTH_TOKEN_METHOD_INVALID', { detail: 'an issuer with its own keys signs with an asymmetric method' });
  }
}
