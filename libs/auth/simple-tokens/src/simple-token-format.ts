// etcd's simple token (server/auth/simple_token.go): 16 random letters from [a-zA-Z], a dot, and a
// decimal uint64 index, e.g. `qLVEbLmctfpktPPy.51`. In ward the index is the Raft index of the log
// entry that assigned the token, so a resolver knows which applied index it must have seen.
import type { Rng } from '@ward/shared/clock';
import { utf8 } from '@ward/shared/bytes';
import { sha256 } from '@ward/shared/digest';
import { assert } from '@ward/shared/errors';

/** Letters in the random part of a simple token (etcd's `defaultSimpleTokenLength`). */
export const SIMPLE_TOKEN_PREFIX_LENGTH_CHARS = 16;

/** etcd draws the prefix from these 52 letters. */
export const SIMPLE_TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Longest well-formed token: 16 letters, a dot and the 16 digits of Number.MAX_SAFE_INTEGER.
 * Anything longer is rejected before any other work.
 */
export const SIMPLE_TOKEN_MAX_LENGTH_CHARS = SIMPLE_TOKEN_PREFIX_LENGTH_CHARS + 1 + 16;

const PREFIX_PATTERN = /^[a-zA-Z]{16}$/;
const INDEX_PATTERN = /^[0-9]{1,20}$/;

/** A parsed simple token. */
export interface SimpleTokenParts {
  readonly prefix: string;
  /** The Raft index of the entry that assigned the token (≥ 1, a safe integer). */
  readonly index: number;
}

/**
 * Draws the 16-letter random part of a new token from `rng` (unbiased: nextInt rejects modulo
 * bias). Production passes a cryptographically strong Rng (`CryptoRng` in `@ward/auth/tokens`);
 * tests pass a SeededRng.
 */
export function generateSimpleTokenPrefix(rng: Rng): string {
  let prefix = '';
  for (let i = 0; i < SIMPLE_TOKEN_PREFIX_LENGTH_CHARS; i++) {
    prefix += SIMPLE_TOKEN_ALPHABET[rng.nextInt(SIMPLE_TOKEN_ALPHABET.length)];
  }
  assert(isSimpleTokenPrefix(prefix), 'generated prefix is well-formed');
  return prefix;
}

/** True for exactly 16 letters from [a-zA-Z]. */
export function isSimpleTokenPrefix(value: string): boolean {
  return PREFIX_PATTERN.test(value);
}

/** `prefix + "." + index`; both must be well-formed (a programmer error otherwise). */
export function formatSimpleToken(prefix: string, index: number): string {
  assert(isSimpleTokenPrefix(prefix), 'simple token prefix is 16 letters');
  assert(Number.isSafeInteger(index) && index >= 1, 'simple token index is a positive safe integer');
  return `${prefix}.${index}`;
}

/**
 * Parses a presented token. Returns undefined for anything that is not exactly
 * `<16 letters>.<decimal index>` with 1 ≤ index ≤ 2^53-1: etcd rejects a token that does not split
 * into two parts or whose index is not a uint64 at once; ward is stricter on the prefix (it can
 * only ever issue 16 letters) and on the index range (no Raft index beyond 2^53 exists), which
 * changes nothing observable but the time to answer `invalid auth token`.
 */
export function parseSimpleToken(token: string): SimpleTokenParts | undefined {
  if (token.length > SIMPLE_TOKEN_MAX_LENGTH_CHARS) return undefined;
  const dot = token.indexOf('.');
  if (dot !== SIMPLE_TOKEN_PREFIX_LENGTH_CHARS) return undefined;
  const prefix = token.slice(0, dot);
  const digits = token.slice(dot + 1);
  if (!isSimpleTokenPrefix(prefix) || !INDEX_PATTERN.test(digits)) return undefined;
  const index = Number(digits);
  // Canonical decimal only: a leading zero could never match an issued token.
  if (!Number.isSafeInteger(index) || index < 1 || String(index) !== digits) return undefined;
  return { prefix, index };
}

/** Domain separation for the sealed form (a version bump would change every sealed token). */
const SEAL_CONTEXT = utf8('ward simple-token seal v1\0');

/**
 * The form a token's random part takes in replicated state — log entries, snapshots, the members'
 * token tables and the internal resolve calls: 16 letters derived from the SHA-256 of the prefix
 * (two digest bytes per letter, modulo 52: the bias is 16/65536). Whoever reads a WAL or a
 * snapshot learns `<sealed>.<index>`, which is not a usable token: presenting it seals it again to
 * something else. The prefix has 16·log2(52) ≈ 91 bits of entropy, so the digest cannot be
 * inverted by search.
 */
export function sealSimpleTokenPrefix(prefix: string): string {
  assert(isSimpleTokenPrefix(prefix), 'simple token prefix is 16 letters');
  const digest = sha256(SEAL_CONTEXT, utf8(prefix));
  let sealed = '';
  for (let i = 0; i < SIMPLE_TOKEN_PREFIX_LENGTH_CHARS; i++) {
    const pair = (digest[2 * i]! << 8) | digest[2 * i + 1]!;
    sealed += SIMPLE_TOKEN_ALPHABET[pair % SIMPLE_TOKEN_ALPHABET.length];
  }
  return sealed;
}

/** A presented token in its sealed form (see `sealSimpleTokenPrefix`), or undefined when malformed. */
export function sealSimpleToken(token: string): string | undefined {
  const parts = parseSimpleToken(token);
  return parts === undefined ? undefined : formatSimpleToken(sealSimpleTokenPrefix(parts.prefix), parts.index);
}
