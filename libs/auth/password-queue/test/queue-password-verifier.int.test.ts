// The gateway-side client against real Redis and deliberately hostile or broken workers: a
// result that does not open, belongs to another request or is garbage must never be believed.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { systemClock } from '@ward/shared/clock';
import {
  PASSWORD_JOB_SCHEMA_VERSION,
  PasswordError,
  checkRequestEnvelope,
  decodeRequestPlaintext,
  encodeResultPlaintext,
  sealAssociatedData,
  type PasswordRequest,
  type PasswordResultEnvelope,
} from '@ward/auth/password-jobs';
import { UnrecoverableError, createWorker, type Job } from '@ward/platform/redis-queue';
import { connectTestRedis, deleteKeys, testRedisOptions, uniquePrefix } from '@ward/testing/redis';
import { PayloadSealer, QueuePasswordVerifier, generateSealingKeyEntry, newRequestId, parseSealingKeys } from '../src/index';

const redis = connectTestRedis('password-queue-int');
const sealer = new PayloadSealer(parseSealingKeys(generateSealingKeyEntry('k1')));
const HASH = utf8('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW');
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await redis.quit();
});

type Processor = (job: Job<unknown, unknown, string>) => Promise<unknown>;

async function rig(label: string, processor: Processor, options: { requestTimeoutMs?: number; attempts?: number } = {}) {
  const prefix = uniquePrefix(label);
  cleanups.push(() => deleteKeys(redis, `${prefix}:*`));
  const worker = createWorker<unknown, unknown, string>({
    name: 'password',
    prefix,
    connection: testRedisOptions(`${label}-worker`),
    processor,
    workerName: label,
    concurrencyCount: 2,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    maxStalledCount: 1,
    processorTimeoutMs: 5000,
    drainDelaySeconds: 1,
    removeOnComplete: true,
    removeOnFail: { ageSeconds: 60, count: 10 },
  });
  cleanups.push(() => worker.close());
  void worker.run();
  const client = await QueuePasswordVerifier.create({
    queueName: 'password',
    prefix,
    connection: testRedisOptions(`${label}-client`),
    sealer,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    maxOutstanding: 16,
    attempts: options.attempts ?? 1,
    backoffDelayMs: 10,
    failedRetention: { ageSeconds: 60, count: 10 },
    eventsMaxLenCount: 1000,
    clock: systemClock,
  });
  cleanups.push(() => client.close());
  return client;
}

/** Opens the request as a real worker would. */
function openRequest(job: Job<unknown, unknown, string>): { request: PasswordRequest; requestId: string; keyId: string } {
  const checked = checkRequestEnvelope(job.name, job.data);
  if (!checked.ok) throw new UnrecoverableError(checked.problem);
  const { name, envelope } = checked.value;
  const plaintext = sealer.open({
    keyId: envelope.keyId,
    requestId: envelope.requestId,
    direction: 'request',
    associatedData: sealAssociatedData({ direction: 'request', name, requestId: envelope.requestId, keyId: envelope.keyId, deadlineMs: envelope.deadlineMs }),
    nonce: envelope.nonce,
    sealed: envelope.sealed,
  });
  const decoded = plaintext && decodeRequestPlaintext(name, plaintext);
  if (!decoded || !decoded.ok) throw new UnrecoverableError('cannot open');
  return { request: decoded.value, requestId: envelope.requestId, keyId: envelope.keyId };
}

function sealedMatch(requestId: string, match: boolean, direction: 'result' | 'request' = 'result'): PasswordResultEnvelope {
  const associatedData = sealAssociatedData({ direction: 'result', name: 'verify', requestId, keyId: 'k1' });
  const sealed = sealer.seal({ keyId: 'k1', requestId, direction, associatedData, plaintext: encodeResultPlaintext({ name: 'verify', match }) });
  return { v: PASSWORD_JOB_SCHEMA_VERSION, requestId, ...sealed };
}

async function codeOf(promise: Promise<unknown>): Promise<{ code?: string; reason?: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PasswordError) return { code: error.code, reason: error.reason };
    throw error;
  }
  return {};
}

describe('QueuePasswordVerifier protocol', () => {
  it('seals exactly the bytes bcrypt reads: the first 72 of a long password, and the hash', async () => {
    const seen: PasswordRequest[] = [];
    const client = await rig('bytes', async (job) => {
      const { request, requestId } = openRequest(job);
      seen.push(request);
      return sealedMatch(requestId, true);
    });
    const long = `${'€'.repeat(30)}tail`; // 94 bytes; the cut falls inside a 3-byte character
    expect(await client.verify(utf8(long), HASH)).toBe(true);
    const request = seen[0]!;
    if (request.name !== 'verify') throw new Error('expected verify');
    expect(request.password).toEqual(utf8(long).slice(0, 72));
    expect(request.hash).toEqual(HASH);
  });

  it('believes no result that fails to open: garbage, another request’s result, a wrong direction', async () => {
    const answers: ((requestId: string) => unknown)[] = [
      () => ({ hello: 'world' }),
      () => sealedMatch(newRequestId(), true),
      (requestId) => ({ ...sealedMatch(newRequestId(), true), requestId }),
      (requestId) => sealedMatch(requestId, true, 'request'),
      (requestId) => ({ ...sealedMatch(requestId, true), match: true, sealed: 'A'.repeat(23) }),
    ];
    let call = 0;
    const client = await rig('hostile', async (job) => {
      const { requestId } = openRequest(job);
      return answers[call++]!(requestId);
    });
    for (let i = 0; i < answers.length; i++) {
      expect(await codeOf(client.verify(utf8('pw'), HASH))).toEqual({ code: 'ERR_AUTH_PASSWORD_TIER_FAILED', reason: 'result-invalid' });
    }
  });

  it('maps worker failures: a refusal code passes through, anything else is TIER_FAILED', async () => {
    const failures = [new UnrecoverableError('ERR_AUTH_PASSWORD_HASH_MALFORMED: cost-above-limit'), new Error('something odd at /etc/passwd')];
    let call = 0;
    const client = await rig('failures', async () => {
      throw failures[call++]!;
    });
    expect(await codeOf(client.verify(utf8('pw'), HASH))).toEqual({ code: 'ERR_AUTH_PASSWORD_HASH_MALFORMED', reason: 'worker' });
    expect(await codeOf(client.verify(utf8('pw'), HASH))).toEqual({ code: 'ERR_AUTH_PASSWORD_TIER_FAILED', reason: 'job-failed' });
  });

  it('retries a transient worker failure (attempts) and then succeeds', async () => {
    let call = 0;
    const client = await rig('transient', async (job) => {
      const { requestId } = openRequest(job);
      if (call++ === 0) throw new Error('transient');
      return sealedMatch(requestId, false);
    }, { attempts: 3 });
    expect(await client.verify(utf8('pw'), HASH)).toBe(false);
    expect(call).toBe(2);
  });

  it('close() fails requests in flight with TIER_CLOSED and refuses new ones', async () => {
    const client = await rig('close', () => new Promise(() => undefined));
    const inFlight = codeOf(client.verify(utf8('pw'), HASH));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await client.close();
    expect((await inFlight).code).toBe('ERR_AUTH_PASSWORD_TIER_CLOSED');
    expect((await codeOf(client.hash(utf8('pw')))).code).toBe('ERR_AUTH_PASSWORD_TIER_CLOSED');
  });

  it('refuses a malformed stored hash before touching Redis', async () => {
    let calls = 0;
    const client = await rig('precheck', async () => {
      calls += 1;
      return undefined;
    });
    expect((await codeOf(client.verify(utf8('pw'), utf8('plaintext!')))).code).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED');
    expect(calls).toBe(0);
  });
});
