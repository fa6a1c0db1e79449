// A password can enter the replicated log only as a bcrypt hash. `PasswordHash` is a branded byte
// string that only `toPasswordHash` creates, and only from bytes in bcrypt's modular crypt format
// (`$2a$`/`$2b$`/`$2x$`/`$2y$`, a two-digit cost 04–31, `$`, 53 characters of bcrypt's base64).
// So a request cannot be built from a plaintext password by mistake: the types have no plaintext
// field, a raw Uint8Array or string is not a PasswordHash, and the codec re-checks the format of
// every hash it reads.

declare const passwordHashBrand: unique symbol;

/** The bytes of a bcrypt hash, checked. Created only by {@link toPasswordHash}. */
export type PasswordHash = Uint8Array & { readonly [passwordHashBrand]: true };

/** Length of every bcrypt hash in modular crypt format. */
export const BCRYPT_HASH_BYTES = 60;

const VARIANTS = new Set([0x61, 0x62, 0x78, 0x79]); // a b x y
const DOLLAR = 0x24;

function isBcryptBase64(byte: number): boolean {
  return (
    byte === 0x2e || // .
    byte === 0x2f || // /
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a)
  );
}

function digit(byte: number | undefined): number {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : -1;
}

/** True when `bytes` is a bcrypt hash in modular crypt format. */
export function isBcryptHash(bytes: Uint8Array): boolean {
  if (bytes.length !== BCRYPT_HASH_BYTES) return false;
  if (bytes[0] !== DOLLAR || bytes[1] !== 0x32 || !VARIANTS.has(bytes[2]!) || bytes[3] !== DOLLAR) return false;
  const tens = digit(bytes[4]);
  const ones = digit(bytes[5]);
  if (tens < 0 || ones < 0) return false;
  const cost = tens * 10 + ones;
  if (cost < 4 || cost > 31 || bytes[6] !== DOLLAR) return false;
  for (let i = 7; i < BCRYPT_HASH_BYTES; i++) if (!isBcryptBase64(bytes[i]!)) return false;
  return true;
}

/**
 * A PasswordHash from bcrypt hash bytes (a copy). Anything else — a plaintext password above all —
 * is a TypeError: passwords are hashed on the password tier before a request is built.
 */
export function toPasswordHash(bytes: Uint8Array): PasswordHash {
  if (!(bytes instanceof Uint8Array) || !isBcryptHash(bytes)) {
    throw new TypeError('a password hash must be a bcrypt hash in modular crypt format');
  }
  return new Uint8Array(bytes) as PasswordHash; // not bytes.slice(): a Buffer's slice is a view
}
