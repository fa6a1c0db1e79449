// The BullMQ contract of the password tier, shared by the gateway-side client and the workers.
//
// Nothing secret is ever in Redis in the clear: a job's data is a *request envelope* whose
// `sealed` field is AES-256-GCM ciphertext (the adapter, @ward/auth/password-queue, does the
// cryptography; this file only fixes the shapes, the byte layouts and the associated data). A
// job's return value is a *result envelope*, sealed the same way, because BullMQ copies return
// values into the queue's event stream. Plaintexts have a fixed size per job name, so ciphertext
// length says nothing about a password's length.

/** Default queue name; deployments may prefix or rename it (tests use unique names). */
export const PASSWORD_QUEUE_NAME = 'password';

/** The version of every envelope and layout below. Workers reject any other (no retry). */
export const PASSWORD_JOB_SCHEMA_VERSION = 1;

export const PASSWORD_JOB_NAMES = ['verify', 'hash'] as const;
export type PasswordJobName = (typeof PASSWORD_JOB_NAMES)[number];

/** Bytes of the AES-GCM nonce and tag. */
export const SEAL_NONCE_BYTES = 12;
export const SEAL_TAG_BYTES = 16;
/** Bytes of a request id (random; also the BullMQ job id). */
export const REQUEST_ID_BYTES = 16;

/** A key id names one entry of the deployment's sealing key ring. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * Plaintext sizes. Requests: password length byte + 72 password bytes zero-padded (+ the 60-byte
 * hash for verify). Results: one match byte (verify) or the 60-byte hash (hash).
 */
export const PLAINTEXT_BYTES: Readonly<Record<PasswordJobName, { request: number; result: number }>> = Object.freeze({
  verify: { request: 1 + 72 + 60, result: 1 },
  hash: { request: 1 + 72, result: 60 },
});

/** Job data in Redis. Only `sealed` is secret, and it is ciphertext. */
export interface PasswordRequestEnvelope {
  readonly v: typeof PASSWORD_JOB_SCHEMA_VERSION;
  /** base64url of 16 random bytes; also the BullMQ job id. */
  readonly requestId: string;
  readonly keyId: string;
  /** The client stops waiting at this time (ms since the epoch); workers drop the job after it. */
  readonly deadlineMs: number;
  /** base64url of the 12-byte nonce. */
  readonly nonce: string;
  /** base64url of ciphertext ‖ 16-byte tag. */
  readonly sealed: string;
}

/** A job's return value (stored in the job hash and the event stream). */
export interface PasswordResultEnvelope {
  readonly v: typeof PASSWORD_JOB_SCHEMA_VERSION;
  readonly requestId: string;
  readonly keyId: string;
  readonly nonce: string;
  readonly sealed: string;
}

/**
 * Codes a worker writes as a job's failure reason (`<CODE>: <reason word>`) when it refuses a job
 * without retry; bcrypt refusals use the PasswordError codes TOO_LONG and HASH_MALFORMED.
 */
export const PASSWORD_JOB_FAILURES = ['ERR_PASSWORD_JOB_PAYLOAD_INVALID', 'ERR_PASSWORD_JOB_EXPIRED', 'ERR_PASSWORD_JOB_UNSEAL_FAILED'] as const;
export type PasswordJobFailure = (typeof PASSWORD_JOB_FAILURES)[number];

/** Decoded request plaintexts. */
export type PasswordRequest =
  | { readonly name: 'verify'; readonly password: Uint8Array; readonly hash: Uint8Array }
  | { readonly name: 'hash'; readonly password: Uint8Array };

/** Decoded result plaintexts. */
export type PasswordResult = { readonly name: 'verify'; readonly match: boolean } | { readonly name: 'hash'; readonly hash: Uint8Array };

/** The result of checking untrusted input: the value, or why it was refused (no secret inside). */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export function isPasswordJobName(name: unknown): name is PasswordJobName {
  return typeof name === 'string' && (PASSWORD_JOB_NAMES as readonly string[]).includes(name);
}

/** Characters of unpadded base64url for `bytes` bytes. */
export function base64UrlLength(bytes: number): number {
  return Math.ceil((bytes * 4) / 3);
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function isBase64UrlOf(value: unknown, bytes: number): value is string {
  return typeof value === 'string' && value.length === base64UrlLength(bytes) && BASE64URL.test(value);
}

/**
 * Associated data bound into every seal: the schema version, the direction, the job name, the
 * request id, the key id and (for requests) the deadline. A sealed value moved to another job,
 * direction or deadline fails authentication.
 */
export function sealAssociatedData(input: {
  direction: 'request' | 'result';
  name: PasswordJobName;
  requestId: string;
  keyId: string;
  deadlineMs?: number;
}): string {
  const deadline = input.direction === 'request' ? String(input.deadlineMs) : '-';
  return ['ward.password-jobs', `v${PASSWORD_JOB_SCHEMA_VERSION}`, input.direction, input.name, input.requestId, input.keyId, deadline].join('|');
}

function checkCommon(data: Record<string, unknown>, keys: readonly string[], name: PasswordJobName, direction: 'request' | 'result'): string | undefined {
  const actual = Object.keys(data).sort();
  const expected = [...keys].sort();
  if (actual.length !== expected.length || actual.some((key, i) => key !== expected[i])) {
    return `fields must be exactly ${expected.join(', ')}`;
  }
  if (data['v'] !== PASSWORD_JOB_SCHEMA_VERSION) return 'unsupported schema version';
  if (!isBase64UrlOf(data['requestId'], REQUEST_ID_BYTES)) return 'requestId is malformed';
  if (typeof data['keyId'] !== 'string' || !KEY_ID_PATTERN.test(data['keyId'])) return 'keyId is malformed';
  if (!isBase64UrlOf(data['nonce'], SEAL_NONCE_BYTES)) return 'nonce is malformed';
  const sealedBytes = PLAINTEXT_BYTES[name][direction] + SEAL_TAG_BYTES;
  if (!isBase64UrlOf(data['sealed'], sealedBytes)) return 'sealed is malformed';
  return undefined;
}

function asRecord(data: unknown): Record<string, unknown> | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  return data as Record<string, unknown>;
}

/** Checks job data taken from Redis (untrusted: anyone with Redis access can write it). */
export function checkRequestEnvelope(name: unknown, data: unknown): Checked<{ name: PasswordJobName; envelope: PasswordRequestEnvelope }> {
  if (!isPasswordJobName(name)) return { ok: false, problem: 'unknown job name' };
  const record = asRecord(data);
  if (record === undefined) return { ok: false, problem: 'data is not an object' };
  const problem = checkCommon(record, ['v', 'requestId', 'keyId', 'deadlineMs', 'nonce', 'sealed'], name, 'request');
  if (problem !== undefined) return { ok: false, problem };
  const deadlineMs = record['deadlineMs'];
  if (typeof deadlineMs !== 'number' || !Number.isSafeInteger(deadlineMs) || deadlineMs <= 0) {
    return { ok: false, problem: 'deadlineMs is malformed' };
  }
  return { ok: true, value: { name, envelope: record as unknown as PasswordRequestEnvelope } };
}

/** Checks a job's return value as the client receives it. */
export function checkResultEnvelope(name: PasswordJobName, data: unknown): Checked<PasswordResultEnvelope> {
  const record = asRecord(data);
  if (record === undefined) return { ok: false, problem: 'result is not an object' };
  const problem = checkCommon(record, ['v', 'requestId', 'keyId', 'nonce', 'sealed'], name, 'result');
  if (problem !== undefined) return { ok: false, problem };
  return { ok: true, value: record as unknown as PasswordResultEnvelope };
}
