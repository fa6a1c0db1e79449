// The worker side: checks, opens and answers one password job. Every deterministic failure
// (malformed or unsupported payload, wrong key, expired deadline, a password or hash bcrypt
// refuses) is an UnrecoverableError whose message is a code and a reason word — never a secret —
// so BullMQ fails the job at once instead of retrying it. Anything else is rethrown and retried.
import { UnrecoverableError, type Job } from '@ward/platform/redis-queue';
import {
  PasswordError,
  checkRequestEnvelope,
  decodeRequestPlaintext,
  encodeResultPlaintext,
  sealAssociatedData,
  PASSWORD_JOB_SCHEMA_VERSION,
  type PasswordJobFailure,
  type PasswordBytesVerifier,
  type PasswordRequest,
  type PasswordResult,
  type PasswordResultEnvelope,
} from '@ward/auth/password-jobs';
import type { Clock } from '@ward/shared/clock';
import type { PayloadSealer } from './payload-sealer';

export interface PasswordJobProcessorOptions {
  readonly sealer: PayloadSealer;
  /** bcrypt, on this process's libuv threads (@ward/auth/password-hashing in the app). */
  readonly hasher: PasswordBytesVerifier;
  /** For deadlines. */
  readonly clock: Clock;
}

function unrecoverable(code: PasswordJobFailure | 'ERR_AUTH_PASSWORD_TOO_LONG' | 'ERR_AUTH_PASSWORD_HASH_MALFORMED', reason: string): UnrecoverableError {
  return new UnrecoverableError(`${code}: ${reason}`);
}

/** The processor for `createWorker` (job data is untrusted: anyone with Redis access can write it). */
export function createPasswordJobProcessor(options: PasswordJobProcessorOptions) {
  return async (job: Job<unknown, PasswordResultEnvelope, string>): Promise<PasswordResultEnvelope> => {
    const checked = checkRequestEnvelope(job.name, job.data);
    if (!checked.ok) throw unrecoverable('ERR_PASSWORD_JOB_PAYLOAD_INVALID', checked.problem);
    const { name, envelope } = checked.value;
    if (job.id !== envelope.requestId) throw unrecoverable('ERR_PASSWORD_JOB_PAYLOAD_INVALID', 'job id is not the request id');
    if (options.clock.nowMs() > envelope.deadlineMs) throw unrecoverable('ERR_PASSWORD_JOB_EXPIRED', 'deadline passed');
    const plaintext = options.sealer.open({
      keyId: envelope.keyId,
      requestId: envelope.requestId,
      direction: 'request',
      associatedData: sealAssociatedData({ direction: 'request', name, requestId: envelope.requestId, keyId: envelope.keyId, deadlineMs: envelope.deadlineMs }),
      nonce: envelope.nonce,
      sealed: envelope.sealed,
    });
    if (plaintext === undefined) throw unrecoverable('ERR_PASSWORD_JOB_UNSEAL_FAILED', 'unknown key or authentication failure');
    const decoded = decodeRequestPlaintext(name, plaintext);
    plaintext.fill(0);
    if (!decoded.ok) throw unrecoverable('ERR_PASSWORD_JOB_PAYLOAD_INVALID', decoded.problem);
    const result = await answer(options.hasher, decoded.value);
    const resultBytes = encodeResultPlaintext(result);
    const sealed = options.sealer.seal({
      keyId: envelope.keyId,
      requestId: envelope.requestId,
      direction: 'result',
      associatedData: sealAssociatedData({ direction: 'result', name, requestId: envelope.requestId, keyId: envelope.keyId }),
      plaintext: resultBytes,
    });
    resultBytes.fill(0);
    return { v: PASSWORD_JOB_SCHEMA_VERSION, requestId: envelope.requestId, ...sealed };
  };
}

async function answer(hasher: PasswordBytesVerifier, request: PasswordRequest): Promise<PasswordResult> {
  try {
    if (request.name === 'verify') return { name: 'verify', match: await hasher.verifyBytes(request.password, request.hash) };
    return { name: 'hash', hash: await hasher.hashBytes(request.password) };
  } catch (error) {
    if (error instanceof PasswordError && (error.code === 'ERR_AUTH_PASSWORD_TOO_LONG' || error.code === 'ERR_AUTH_PASSWORD_HASH_MALFORMED')) {
      throw unrecoverable(error.code, error.reason ?? 'refused');
    }
    throw error;
  } finally {
    request.password.fill(0);
  }
}

