// The worker's processor, driven directly with job objects (no Redis): every refusal is an
// UnrecoverableError with a code, a sealed answer opens to the right result.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { utf8 } from '@ward/shared/bytes';
import {
  PLAINTEXT_BYTES,
  PASSWORD_JOB_SCHEMA_VERSION,
  decodeResultPlaintext,
  encodeRequestPlaintext,
  sealAssociatedData,
  type PasswordJobName,
  type PasswordRequestEnvelope,
  type PasswordResultEnvelope,
} from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier } from '@ward/auth/password-hashing';
import { UnrecoverableError, type Job } from '@ward/platform/redis-queue';
import { PayloadSealer, createPasswordJobProcessor, generateSealingKeyEntry, newRequestId, parseSealingKeys } from '@ward/auth/password-queue';

const NOW_MS = 1_700_000_000_000;
const sealer = new PayloadSealer(parseSealingKeys(generateSealingKeyEntry('k1')));
const hasher = new BcryptPasswordVerifier({ cost: 4, maxVerifyCost: 12 });
const clock = new ManualClock(NOW_MS);
const processor = createPasswordJobProcessor({ sealer, hasher, clock });

function envelopeFor(name: PasswordJobName, plaintext: Uint8Array, overrides: Partial<PasswordRequestEnvelope> = {}): PasswordRequestEnvelope {
  const requestId = overrides.requestId ?? newRequestId();
  const deadlineMs = overrides.deadlineMs ?? NOW_MS + 5000;
  const associatedData = sealAssociatedData({ direction: 'request', name, requestId, keyId: 'k1', deadlineMs });
  const sealed = sealer.seal({ keyId: 'k1', requestId, direction: 'request', associatedData, plaintext });
  return { v: PASSWORD_JOB_SCHEMA_VERSION, requestId, keyId: 'k1', deadlineMs, nonce: sealed.nonce, sealed: sealed.sealed, ...overrides };
}

function job(name: string, data: unknown, id?: string): Job<unknown, PasswordResultEnvelope, string> {
  return { id: id ?? (data as { requestId?: string }).requestId, name, data } as Job<unknown, PasswordResultEnvelope, string>;
}

function open(name: PasswordJobName, result: PasswordResultEnvelope) {
  const plaintext = sealer.open({
    keyId: result.keyId,
    requestId: result.requestId,
    direction: 'result',
    associatedData: sealAssociatedData({ direction: 'result', name, requestId: result.requestId, keyId: result.keyId }),
    nonce: result.nonce,
    sealed: result.sealed,
  });
  if (plaintext === undefined) throw new Error('result does not open');
  const decoded = decodeResultPlaintext(name, plaintext);
  if (!decoded.ok) throw new Error(decoded.problem);
  return decoded.value;
}

async function refusal(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(UnrecoverableError);
    return (error as Error).message;
  }
  throw new Error('expected an UnrecoverableError');
}

describe('password job processor', () => {
  it('answers hash and verify jobs with sealed results', async () => {
    const hashEnvelope = envelopeFor('hash', encodeRequestPlaintext({ name: 'hash', password: utf8('s3cret') }));
    const hashResult = open('hash', await processor(job('hash', hashEnvelope)));
    if (hashResult.name !== 'hash') throw new Error('expected a hash');
    expect(await hasher.verify(utf8('s3cret'), hashResult.hash)).toBe(true);
    for (const [password, match] of [['s3cret', true], ['wrong', false]] as const) {
      const envelope = envelopeFor('verify', encodeRequestPlaintext({ name: 'verify', password: utf8(password), hash: hashResult.hash }));
      const result = await processor(job('verify', envelope));
      expect(result.requestId).toBe(envelope.requestId);
      expect(JSON.stringify(result)).not.toContain('true');
      expect(open('verify', result)).toEqual({ name: 'verify', match });
    }
  });

  it.each<[string, () => Job<unknown, PasswordResultEnvelope, string>, RegExp]>([
    ['an unknown job name', () => job('rehash', envelopeFor('hash', new Uint8Array(PLAINTEXT_BYTES.hash.request))), /^ERR_PASSWORD_JOB_PAYLOAD_INVALID: unknown job name/],
    ['a plaintext password in the data', () => job('verify', { password: 'hunter2' }, 'x'), /^ERR_PASSWORD_JOB_PAYLOAD_INVALID/],
    ['a string as data', () => job('verify', 'garbage', 'x'), /^ERR_PASSWORD_JOB_PAYLOAD_INVALID/],
    ['schema version 2', () => job('hash', { ...envelopeFor('hash', new Uint8Array(73)), v: 2 }), /unsupported schema version/],
    ['a job id other than the request id', () => job('hash', envelopeFor('hash', new Uint8Array(73)), 'other-id'), /job id is not the request id/],
    ['a passed deadline', () => job('hash', envelopeFor('hash', new Uint8Array(73), { deadlineMs: NOW_MS - 1 })), /^ERR_PASSWORD_JOB_EXPIRED/],
    ['a deadline changed after sealing', () => {
      const envelope = envelopeFor('hash', new Uint8Array(73));
      return job('hash', { ...envelope, deadlineMs: envelope.deadlineMs + 60_000 });
    }, /^ERR_PASSWORD_JOB_UNSEAL_FAILED/],
    ['a verify payload sent as a hash job', () => {
      const envelope = envelopeFor('hash', new Uint8Array(73));
      return job('verify', envelope);
    }, /^ERR_PASSWORD_JOB_PAYLOAD_INVALID: sealed is malformed/],
    ['a key the worker does not hold', () => job('hash', { ...envelopeFor('hash', new Uint8Array(73)), keyId: 'k9' }), /^ERR_PASSWORD_JOB_UNSEAL_FAILED/],
    ['a non-canonical plaintext', () => {
      const bytes = new Uint8Array(73);
      bytes[0] = 1;
      bytes[5] = 9;
      return job('hash', envelopeFor('hash', bytes));
    }, /^ERR_PASSWORD_JOB_PAYLOAD_INVALID: password padding/],
  ])('refuses %s without retry', async (_name, makeJob, pattern) => {
    expect(await refusal(processor(makeJob()))).toMatch(pattern);
  });

  it('refuses a stored hash above the worker’s cost limit without retry, and never echoes secrets', async () => {
    const hash = utf8('$2a$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW');
    const envelope = envelopeFor('verify', encodeRequestPlaintext({ name: 'verify', password: utf8('hunter2'), hash }));
    const message = await refusal(processor(job('verify', envelope)));
    expect(message).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED: cost-above-limit');
  });
});
