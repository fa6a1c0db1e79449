// Fixed-size byte layouts of the sealed plaintexts (see job-contract.ts). Callers zero the buffers
// they get once done with them.
import { BCRYPT_HASH_LENGTH_BYTES, BCRYPT_MAX_PASSWORD_BYTES, bcryptHashCost } from './bcrypt-rules';
import { PLAINTEXT_BYTES, type Checked, type PasswordJobName, type PasswordRequest, type PasswordResult } from './job-contract';
import { assert } from '@ward/shared/errors';

/** Encodes a request plaintext; the password must already be at most 72 bytes. */
export function encodeRequestPlaintext(request: PasswordRequest): Uint8Array {
  assert(request.password.length <= BCRYPT_MAX_PASSWORD_BYTES, 'password fits the layout');
  const out = new Uint8Array(PLAINTEXT_BYTES[request.name].request);
  out[0] = request.password.length;
  out.set(request.password, 1);
  if (request.name === 'verify') {
    assert(request.hash.length === BCRYPT_HASH_LENGTH_BYTES, 'hash fits the layout');
    out.set(request.hash, 1 + BCRYPT_MAX_PASSWORD_BYTES);
  }
  return out;
}

/** Decodes a request plaintext (authenticated, so only a bug or a key compromise makes it odd). */
export function decodeRequestPlaintext(name: PasswordJobName, bytes: Uint8Array): Checked<PasswordRequest> {
  if (bytes.length !== PLAINTEXT_BYTES[name].request) return { ok: false, problem: 'plaintext size' };
  const length = bytes[0]!;
  if (length > BCRYPT_MAX_PASSWORD_BYTES) return { ok: false, problem: 'password length' };
  for (let i = 1 + length; i < 1 + BCRYPT_MAX_PASSWORD_BYTES; i++) {
    if (bytes[i] !== 0) return { ok: false, problem: 'password padding' };
  }
  const password = bytes.slice(1, 1 + length);
  if (name === 'hash') return { ok: true, value: { name, password } };
  const hash = bytes.slice(1 + BCRYPT_MAX_PASSWORD_BYTES);
  if (bcryptHashCost(hash) === undefined) return { ok: false, problem: 'hash is not bcrypt' };
  return { ok: true, value: { name, password, hash } };
}

export function encodeResultPlaintext(result: PasswordResult): Uint8Array {
  if (result.name === 'verify') return Uint8Array.of(result.match ? 1 : 0);
  assert(bcryptHashCost(result.hash) !== undefined, 'a hash result is a bcrypt hash');
  return result.hash.slice();
}

export function decodeResultPlaintext(name: PasswordJobName, bytes: Uint8Array): Checked<PasswordResult> {
  if (bytes.length !== PLAINTEXT_BYTES[name].result) return { ok: false, problem: 'plaintext size' };
  if (name === 'verify') {
    if (bytes[0] !== 0 && bytes[0] !== 1) return { ok: false, problem: 'match flag' };
    return { ok: true, value: { name, match: bytes[0] === 1 } };
  }
  if (bcryptHashCost(bytes) === undefined) return { ok: false, problem: 'hash is not bcrypt' };
  return { ok: true, value: { name, hash: bytes.slice() } };
}
