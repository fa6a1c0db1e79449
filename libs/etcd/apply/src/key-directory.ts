// The directory of token-signing public keys, replicated through the log: token-service replicas
// publish the public half of each key they generate (admin-only), with the times it signs from
// and may be verified until; gateways read the directory and verify JWTs against it. Revoking a
// key removes it at once and bumps the auth revision (the applier's job), so every token issued
// before — by any key — is refused as stale on every gateway at its next request, and a
// revoked key id can never be published again.
//
// Deterministic: the applier has no clock, so a publish carries the proposer's time, and keys
// retired before that time are dropped then.
import { ApplyError } from './errors';

/** One published public key. Times in epoch seconds; retireAfterSeconds 0: no end. */
export interface SigningKeyRecord {
  readonly keyId: string;
  readonly alg: string;
  /** The public JWK as JSON text (the verifier imports it; never a private part). */
  readonly publicJwk: string;
  readonly notBeforeSeconds: number;
  readonly retireAfterSeconds: number;
}

/** Keys in the directory at most (each token-service replica publishes a handful). */
export const MAX_SIGNING_KEYS = 256;
/** Revoked key ids remembered at most (the oldest is forgotten first). */
export const MAX_REVOKED_KEY_IDS = 1024;
/** Largest public JWK text (an RSA-4096 JWK is under 1 KiB). */
export const MAX_PUBLIC_JWK_CHARS = 4096;

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const ASYMMETRIC_ALGS: ReadonlySet<string> = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);
/** Members of a private JWK that must never be published. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function invalid(message: string): never {
  throw new ApplyError('ERR_APPLY_SIGNING_KEY_INVALID', message);
}

/** Checks a record's shape: bounded, public, asymmetric, consistent. */
export function checkSigningKeyRecord(record: SigningKeyRecord): void {
  if (!KEY_ID.test(record.keyId)) invalid('key id must match [A-Za-z0-9._-]{1,64}');
  if (!ASYMMETRIC_ALGS.has(record.alg)) invalid('key algorithm must be asymmetric');
  if (record.publicJwk.length > MAX_PUBLIC_JWK_CHARS) invalid('public JWK too large');
  if (!Number.isSafeInteger(record.notBeforeSeconds) || record.notBeforeSeconds < 0) invalid('notBefore out of range');
  if (!Number.isSafeInteger(record.retireAfterSeconds) || record.retireAfterSeconds < 0) invalid('retireAfter out of range');
  if (record.retireAfterSeconds !== 0 && record.retireAfterSeconds <= record.notBeforeSeconds) invalid('retireAfter must follow notBefore');
  let jwk: unknown;
  try {
    jwk = JSON.parse(record.publicJwk);
  } catch {
    invalid('public JWK is not JSON');
  }
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) invalid('public JWK is not an object');
  const members = jwk as Record<string, unknown>;
  for (const name of PRIVATE_MEMBERS) if (name in members) invalid('a public JWK carries no private or secret part');
  if (members['kty'] !== 'OKP' && members['kty'] !== 'EC' && members['kty'] !== 'RSA') invalid('public JWK kty must be OKP, EC or RSA');
  if (members['kid'] !== undefined && members['kid'] !== record.keyId) invalid('public JWK kid differs from the key id');
}

export class SigningKeyDirectory {
  private readonly keys = new Map<string, SigningKeyRecord>();
  /** Revoked ids in revocation order (oldest first). */
  private readonly revoked: string[] = [];
  private readonly revokedSet = new Set<string>();

  /**
   * Adds (or re-publishes with new times) a key; drops keys retired before `nowSeconds` first.
   * Refused: a malformed record, a revoked id, an id already used by another key, a full directory.
   */
  publish(record: SigningKeyRecord, nowSeconds: number): void {
    checkSigningKeyRecord(record);
    if (!Number.isSafeInteger(nowSeconds) || nowSeconds < 0) invalid('publish time out of range');
    if (this.revokedSet.has(record.keyId)) throw new ApplyError('ERR_APPLY_SIGNING_KEY_REVOKED', 'token signing key was revoked');
    this.prune(nowSeconds);
    const existing = this.keys.get(record.keyId);
    if (existing !== undefined && (existing.alg !== record.alg || existing.publicJwk !== record.publicJwk)) {
      throw new ApplyError('ERR_APPLY_SIGNING_KEY_CONFLICT', 'token signing key id already in use');
    }
    if (existing === undefined && this.keys.size >= MAX_SIGNING_KEYS) throw new ApplyError('ERR_APPLY_SIGNING_KEY_LIMIT', 'too many token signing keys');
    this.keys.set(record.keyId, { ...record });
  }

  /** Removes a key for good. */
  revoke(keyId: string): void {
    if (!this.keys.delete(keyId)) throw new ApplyError('ERR_APPLY_SIGNING_KEY_NOT_FOUND', 'token signing key not found');
    this.remember(keyId);
  }

  /** Every key, by id. */
  list(): SigningKeyRecord[] {
    return [...this.keys.keys()].sort().map((id) => this.keys.get(id)!);
  }

  /** Revoked ids, oldest first. */
  revokedIds(): readonly string[] {
    return this.revoked;
  }

  get empty(): boolean {
    return this.keys.size === 0 && this.revoked.length === 0;
  }

  /** Snapshot restore: a key as it was (checked again). */
  restoreKey(record: SigningKeyRecord): void {
    checkSigningKeyRecord(record);
    if (this.keys.has(record.keyId) || this.keys.size >= MAX_SIGNING_KEYS) invalid('duplicate or too many keys');
    this.keys.set(record.keyId, { ...record });
  }

  /** Snapshot restore: a revoked id, in order. */
  restoreRevoked(keyId: string): void {
    if (!KEY_ID.test(keyId) || this.revokedSet.has(keyId) || this.keys.has(keyId)) invalid('malformed revoked key id');
    this.remember(keyId);
  }

  private remember(keyId: string): void {
    this.revoked.push(keyId);
    this.revokedSet.add(keyId);
    if (this.revoked.length > MAX_REVOKED_KEY_IDS) this.revokedSet.delete(this.revoked.shift()!);
  }

  private prune(nowSeconds: number): void {
    for (const [id, key] of this.keys) if (key.retireAfterSeconds !== 0 && key.retireAfterSeconds <= nowSeconds) this.keys.delete(id);
  }
}
