// The BullMQ password tier end to end: real Redis (127.0.0.1:6379), real password-verifier
// processes, the gateway-side QueuePasswordVerifier. Each test has its own key prefix, deleted after.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { systemClock } from '@ward/shared/clock';
import { hasCode } from '@ward/shared/errors';
import { BcryptPasswordVerifier } from '@ward/auth/password-hashing';
import { PasswordError } from '@ward/auth/password-jobs';
import { PayloadSealer, QueuePasswordVerifier, generateSealingKeyEntry, parseSealingKeys } from '@ward/auth/password-queue';
import { createQueue, createQueueEvents, type QueueEvents } from '@ward/platform/redis-queue';
import { connectTestRedis, deleteKeys, dumpKeys, testRedisOptions, uniquePrefix } from '@ward/testing/redis';
import { startVerifierProcess, started, type VerifierProcess } from './verifier-process';

const redis = connectTestRedis('password-tier-int');
const keyRing = generateSealingKeyEntry('k1');
const sealer = new PayloadSealer(parseSealingKeys(keyRing));
const cleanups: (() => Promise<unknown>)[] = [];
const processes: VerifierProcess[] = [];
let slowHash: Uint8Array;

beforeAll(async () => {
  // A cost-14 hash takes long enough to verify (~1 s) that a worker can be killed in the middle.
  slowHash = await new BcryptPasswordVerifier({ cost: 14 }).hash(utf8('slow but right'));
});

afterEach(async () => {
  for (const process of processes.splice(0)) {
    process.signal('SIGKILL');
    await process.exited;
  }
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await redis.quit();
});

function workerEnv(prefix: string, name: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    VERIFIER_PAYLOAD_KEYS: keyRing,
    VERIFIER_QUEUE_PREFIX: prefix,
    VERIFIER_HTTP_PORT: '0',
    VERIFIER_BCRYPT_COST: '4',
    VERIFIER_LOG_LEVEL: 'debug',
    VERIFIER_LOCK_DURATION_MS: '2000',
    VERIFIER_STALLED_INTERVAL_MS: '1000',
    VERIFIER_JOB_TIMEOUT_MS: '15000',
    VERIFIER_DRAIN_DELAY_SECONDS: '1',
    VERIFIER_WORKER_NAME: name,
    ...overrides,
  };
}

async function startWorker(prefix: string, name: string, overrides: Record<string, string> = {}): Promise<VerifierProcess> {
  const process = startVerifierProcess(workerEnv(prefix, name, overrides));
  processes.push(process);
  await process.waitForLine(started, 60_000);
  return process;
}

async function client(prefix: string, overrides: { requestTimeoutMs?: number; maxOutstanding?: number } = {}): Promise<QueuePasswordVerifier> {
  const verifier = await QueuePasswordVerifier.create({
    queueName: 'password',
    prefix,
    connection: testRedisOptions('password-tier-client'),
    sealer,
    requestTimeoutMs: overrides.requestTimeoutMs ?? 20_000,
    maxOutstanding: overrides.maxOutstanding ?? 256,
    attempts: 3,
    backoffDelayMs: 100,
    failedRetention: { ageSeconds: 3600, count: 100 },
    eventsMaxLenCount: 10_000,
    clock: systemClock,
  });
  cleanups.push(() => verifier.close());
  return verifier;
}

function freshPrefix(label: string): string {
  const prefix = uniquePrefix(label);
  cleanups.push(() => deleteKeys(redis, `${prefix}:*`));
  return prefix;
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PasswordError) return error.code;
    throw error;
  }
  return undefined;
}

const jobLines = (process: VerifierProcess, msg: string): string[] => process.lines.filter((l) => l['msg'] === msg).map((l) => String(l['jobId']));

describe('hash and verify through the queue', () => {
  it('with two worker processes: correct answers, both workers used, hashes valid for in-process bcrypt', async () => {
    const prefix = freshPrefix('two-workers');
    const [a, b] = await Promise.all([startWorker(prefix, 'A'), startWorker(prefix, 'B')]);
    const verifier = await client(prefix);
    const passwords = Array.from({ length: 16 }, (_, i) => `password-${i}-é`);
    const hashes = await Promise.all(passwords.map((password) => verifier.hash(utf8(password))));
    const local = new BcryptPasswordVerifier({ cost: 4 });
    for (const [i, hash] of hashes.entries()) {
      expect(fromUtf8(hash)).toMatch(/^\$2b\$04\$/);
      expect(await local.verify(utf8(passwords[i]!), hash)).toBe(true);
    }
    const checks = await Promise.all(passwords.flatMap((password, i) => [verifier.verify(utf8(password), hashes[i]!), verifier.verify(utf8(`${password}x`), hashes[i]!)]));
    expect(checks).toEqual(passwords.flatMap(() => [true, false]));
    expect(await verifier.verify(utf8('U*U'), utf8('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'))).toBe(true);
    // A worker logs a job's completion after BullMQ has handed its result on: the last lines may
    // still be on their way through the pipe when the answers are in.
    await expect.poll(() => jobLines(a, 'password job completed').length + jobLines(b, 'password job completed').length, { timeout: 5000 }).toBe(16 * 3 + 1);
    const doneA = jobLines(a, 'password job completed');
    const doneB = jobLines(b, 'password job completed');
    expect(doneA.length).toBeGreaterThan(0);
    expect(doneB.length).toBeGreaterThan(0);
    expect(doneA.filter((id) => doneB.includes(id))).toEqual([]);
    expect(verifier.outstanding).toBe(0);
  });

  it('maps a worker refusal back to its code (a stored hash above the cost limit), without retrying', async () => {
    const prefix = freshPrefix('refusal');
    const worker = await startWorker(prefix, 'A', { VERIFIER_BCRYPT_MAX_VERIFY_COST: '12' });
    const verifier = await client(prefix);
    expect(await codeOf(verifier.verify(utf8('x'), slowHash))).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED');
    expect(jobLines(worker, 'password job started')).toHaveLength(1);
    expect(await codeOf(verifier.hash(utf8('y'.repeat(73))))).toBe('ERR_AUTH_PASSWORD_TOO_LONG'); // refused before Redis
  });
});

describe('failures', () => {
  it('a worker killed mid-job: the job is retried by the other worker and the caller gets the answer', async () => {
    const prefix = freshPrefix('kill');
    const a = await startWorker(prefix, 'A');
    const verifier = await client(prefix);
    const answer = verifier.verify(utf8('slow but right'), slowHash);
    const startedOnA = await a.waitForLine((l) => l['msg'] === 'password job started', 20_000);
    a.signal('SIGKILL');
    expect(await a.exited).toBeNull();
    expect(jobLines(a, 'password job completed')).toEqual([]);
    const b = await startWorker(prefix, 'B');
    expect(await answer).toBe(true);
    await b.waitForLine((l) => l['msg'] === 'password job completed' && l['jobId'] === startedOnA['jobId'], 10_000);
  });

  it('times out without workers, removes the waiting job, and bounds outstanding requests', async () => {
    const prefix = freshPrefix('timeout');
    const verifier = await client(prefix, { requestTimeoutMs: 400, maxOutstanding: 2 });
    const startedMs = Date.now();
    const first = codeOf(verifier.verify(utf8('a'), slowHash));
    const second = codeOf(verifier.verify(utf8('b'), slowHash));
    expect(await codeOf(verifier.verify(utf8('c'), slowHash))).toBe('ERR_AUTH_PASSWORD_TIER_BUSY');
    expect(await first).toBe('ERR_AUTH_PASSWORD_TIER_TIMEOUT');
    expect(await second).toBe('ERR_AUTH_PASSWORD_TIER_TIMEOUT');
    expect(Date.now() - startedMs).toBeLessThan(3000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await redis.llen(`${prefix}:password:wait`)).toBe(0);
    expect(verifier.outstanding).toBe(0);
    // A worker started later finds nothing to do.
    const late = await startWorker(prefix, 'late');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(jobLines(late, 'password job started')).toEqual([]);
  });

  it('rejects malformed payloads as UnrecoverableError: one try each, the reason is a code, nothing echoed', async () => {
    const prefix = freshPrefix('malformed');
    const worker = await startWorker(prefix, 'A');
    const queue = createQueue<unknown, unknown, string>({
      name: 'password',
      prefix,
      connection: testRedisOptions('malformed-producer'),
      jobs: { attempts: 5, backoffDelayMs: 10, removeOnComplete: true, removeOnFail: { ageSeconds: 3600, count: 100 }, stackTraceLimit: 0, dataLimitBytes: 4096 },
      eventsMaxLenCount: 1000,
    });
    const events: QueueEvents = await createQueueEvents({ name: 'password', prefix, connection: testRedisOptions('malformed-events'), blockingTimeoutMs: 1000 });
    cleanups.push(() => queue.close(), () => events.close());
    const bad: [string, unknown][] = [
      ['verify', { password: 'hunter2-plaintext', hash: '$2b$04$x' }],
      ['verify', 'just a string'],
      ['hash', { v: 2, requestId: 'x', keyId: 'k1', deadlineMs: 1, nonce: 'n', sealed: 's' }],
      ['shell', { cmd: 'rm -rf /' }],
    ];
    const failures = new Map<string, string>();
    const allFailed = new Promise<void>((resolve) =>
      events.on('failed', ({ jobId, failedReason }) => {
        failures.set(jobId, failedReason);
        if (failures.size === bad.length) resolve();
      }),
    );
    for (const [i, [name, data]] of bad.entries()) await queue.add(name, data, { jobId: `bad-${i}` });
    await allFailed;
    for (const [i] of bad.entries()) {
      expect(failures.get(`bad-${i}`)).toMatch(/^ERR_PASSWORD_JOB_PAYLOAD_INVALID: /);
      const job = await queue.getJob(`bad-${i}`);
      expect(job?.attemptsMade).toBe(1);
    }
    expect(worker.output()).not.toContain('hunter2');
    expect([...failures.values()].join(' ')).not.toContain('hunter2');
  });
});

describe('secrets never sit in Redis in the clear', () => {
  it('after hash, verify, refused and retained jobs, no key or value holds a password or a hash', async () => {
    const prefix = freshPrefix('scan');
    await startWorker(prefix, 'A', { VERIFIER_BCRYPT_MAX_VERIFY_COST: '12' });
    const verifier = await client(prefix);
    const canary = `canary-${Math.random().toString(36).slice(2)}-пароль`;
    const hash = await verifier.hash(utf8(canary));
    expect(await verifier.verify(utf8(canary), hash)).toBe(true);
    expect(await verifier.verify(utf8(`${canary}-wrong`), hash)).toBe(false);
    expect(await codeOf(verifier.verify(utf8(canary), slowHash))).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED'); // a failed job stays in Redis
    expect(await redis.zcard(`${prefix}:password:failed`)).toBe(1);

    const forbidden = [canary, hash, slowHash].flatMap((secret) => {
      const bytes = typeof secret === 'string' ? Buffer.from(secret) : Buffer.from(secret);
      return [bytes.toString('utf8'), bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), bytes.toString('utf8').slice(0, 24)];
    });
    const entries = await dumpKeys(redis, '*');
    const ours = entries.filter((entry) => entry.key.startsWith(`${prefix}:`));
    expect(ours.length).toBeGreaterThan(3); // the scan saw the queue's keys (events stream, failed set, job hash…)
    expect(ours.some((entry) => entry.type === 'stream')).toBe(true);
    for (const entry of entries) {
      for (const text of [entry.key, ...entry.values]) {
        for (const secret of forbidden) expect(text.includes(secret), `${entry.key} holds a secret`).toBe(false);
      }
    }
  });
});

describe('process lifecycle', () => {
  it('serves /healthz, /readyz and /metrics, and on SIGTERM finishes the running job, then exits 0', async () => {
    const prefix = freshPrefix('lifecycle');
    const worker = await startWorker(prefix, 'A');
    const port = Number((await worker.waitForLine(started, 1000))['httpPort']);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const verifier = await client(prefix);
    const answer = verifier.verify(utf8('slow but right'), slowHash);
    await worker.waitForLine((l) => l['msg'] === 'password job started', 20_000);
    worker.signal('SIGTERM');
    expect(await answer).toBe(true);
    expect(await worker.exited).toBe(0);
    expect(worker.lines.some((l) => l['msg'] === 'password verifier closed')).toBe(true);
    expect(hasCode(new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED'), 'ERR_AUTH_PASSWORD_TIER_CLOSED')).toBe(true);
  });

  it('exports job metrics', async () => {
    const prefix = freshPrefix('metrics');
    const worker = await startWorker(prefix, 'A');
    const port = Number((await worker.waitForLine(started, 1000))['httpPort']);
    const verifier = await client(prefix);
    await verifier.hash(utf8('metrics'));
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/ward_password_verifier_jobs_total\{name="hash",outcome="completed"\} 1/);
    expect(text).toMatch(/ward_password_verifier_bcrypt_cost 4/);
  });
});
