// AES-256-GCM sealing of password-job payloads and results (see @ward/auth/password-jobs for the
// shapes). Every message gets its own key, derived with HKDF-SHA256 from the deployment key, the
// request's random 16-byte id and the direction, so the GCM random-nonce limit (about 2^32
// messages per key) never applies to the long-lived deployment key; the associated data binds the
// ciphertext to its job, direction, key id and deadline.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { KEY_ID_PATTERN, REQUEST_ID_BYTES, SEAL_NONCE_BYTES, SEAL_TAG_BYTES } from '@ward/auth/password-jobs';
import { assert } from '@ward/shared/errors';

/** Bytes of a deployment sealing key (AES-256). */
export const SEALING_KEY_BYTES = 32;
/** Keys held at once (the active one plus older ones still accepted during a rotation). */
export const MAX_SEALING_KEYS = 8;

export interface SealingKey {
  readonly keyId: string;
  readonly key: Uint8Array;
}

export interface SealedMessage {
  readonly keyId: string;
  /** base64url nonce. */
  readonly nonce: string;
  /** base64url ciphertext ‖ tag. */
  readonly sealed: string;
}

export type SealDirection = 'request' | 'result';

/**
 * Seals with the active key; opens with any held key. Shared by gateways (seal requests, open
 * results) and workers (open requests, seal results with the request's key id).
 */
export class PayloadSealer {
  private readonly keys: ReadonlyMap<string, Buffer>;

  /** The first key is active. Throws TypeError on a malformed key ring (startup misconfiguration). */
  constructor(keys: readonly SealingKey[]) {
    if (keys.length === 0 || keys.length > MAX_SEALING_KEYS) throw new TypeError(`PayloadSealer: between 1 and ${MAX_SEALING_KEYS} keys are required`);
    const map = new Map<string, Buffer>();
    for (const { keyId, key } of keys) {
      if (!KEY_ID_PATTERN.test(keyId)) throw new TypeError('PayloadSealer: a key id must match [A-Za-z0-9_-]{1,32}');
      if (key.length !== SEALING_KEY_BYTES) throw new TypeError(`PayloadSealer: key ${keyId} must be ${SEALING_KEY_BYTES} bytes`);
      if (map.has(keyId)) throw new TypeError(`PayloadSealer: duplicate key id ${keyId}`);
      map.set(keyId, Buffer.from(key));
    }
    this.keys = map;
    this.activeKeyId = keys[0]!.keyId;
  }

  readonly activeKeyId: string;

  hasKey(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** Seals `plaintext` under `keyId` for the request `requestId` (base64url of 16 bytes). */
  seal(input: { keyId: string; requestId: string; direction: SealDirection; associatedData: string; plaintext: Uint8Array }): SealedMessage {
    const key = this.messageKey(input.keyId, input.requestId, input.direction);
    assert(key !== undefined, 'sealing with a held key and a well-formed request id');
    const nonce = randomBytes(SEAL_NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: SEAL_TAG_BYTES });
    cipher.setAAD(Buffer.from(input.associatedData, 'utf8'));
    const sealed = Buffer.concat([cipher.update(input.plaintext), cipher.final(), cipher.getAuthTag()]);
    key.fill(0);
    return { keyId: input.keyId, nonce: nonce.toString('base64url'), sealed: sealed.toString('base64url') };
  }

  /** The plaintext, or undefined for an unknown key id or any authentication failure. */
  open(input: { keyId: string; requestId: string; direction: SealDirection; associatedData: string; nonce: string; sealed: string }): Uint8Array | undefined {
    const key = this.messageKey(input.keyId, input.requestId, input.direction);
    if (key === undefined) return undefined;
    const nonce = Buffer.from(input.nonce, 'base64url');
    const sealed = Buffer.from(input.sealed, 'base64url');
    if (nonce.length !== SEAL_NONCE_BYTES || sealed.length < SEAL_TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: SEAL_TAG_BYTES });
      decipher.setAAD(Buffer.from(input.associatedData, 'utf8'));
      decipher.setAuthTag(sealed.subarray(sealed.length - SEAL_TAG_BYTES));
      return new Uint8Array(Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - SEAL_TAG_BYTES)), decipher.final()]));
    } catch {
      return undefined;
    } finally {
      key.fill(0);
    }
  }

  private messageKey(keyId: string, requestId: string, direction: SealDirection): Buffer | undefined {
    const master = this.keys.get(keyId);
    const salt = Buffer.from(requestId, 'base64url');
    if (master === undefined || salt.length !== REQUEST_ID_BYTES) return undefined;
    return Buffer.from(hkdfSync('sha256', master, salt, `ward.password-jobs v1 ${direction}`, SEALING_KEY_BYTES));
  }
}

/**
 * Parses a key ring written as `id:base64url-key[,id:base64url-key…]` (the first is active), the
 * form of the `…_PAYLOAD_KEYS` settings. Throws TypeError without echoing key material.
 */
export function parseSealingKeys(text: string): SealingKey[] {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  if (entries.length === 0 || entries.length > MAX_SEALING_KEYS) throw new TypeError(`sealing keys: between 1 and ${MAX_SEALING_KEYS} entries are required`);
  return entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    const keyId = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    const key = Buffer.from(encoded, 'base64url');
    if (colon <= 0 || !KEY_ID_PATTERN.test(keyId) || !/^[A-Za-z0-9_-]+$/.test(encoded) || key.length !== SEALING_KEY_BYTES) {
      throw new TypeError(`sealing keys: entry ${index + 1} must be <id>:<base64url of ${SEALING_KEY_BYTES} bytes>`);
    }
    return { keyId, key: new Uint8Array(key) };
  });
}

/** A new random key ring entry `id:base64url-key` (for operators creating a deployment key). */
export function generateSealingKeyEntry(keyId: string): string {
  if (!KEY_ID_PATTERN.test(keyId)) throw new TypeError('key id must match [A-Za-z0-9_-]{1,32}');
  return `${keyId}:${randomBytes(SEALING_KEY_BYTES).toString('base64url')}`;
}

/** A fresh request id: base64url of 16 random bytes (also the job id and the HKDF salt). */
export function newRequestId(): string {
  return randomBytes(REQUEST_ID_BYTES).toString('base64url');
}
