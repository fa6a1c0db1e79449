// The password-verifier's whole configuration: VERIFIER_* environment variables, each with a
// default, a unit and a reason. Read once by main.ts.
import { bool, defineConfig, int, oneOf, string, type ConfigValues } from '@ward/platform/config';
import { BCRYPT_DEFAULT_COST, BCRYPT_MAX_COST, BCRYPT_MIN_COST, PASSWORD_QUEUE_NAME } from '@ward/auth/password-jobs';
import { DEFAULT_MAX_VERIFY_COST } from '@ward/auth/password-hashing';
import { parseSealingKeys } from '@ward/auth/password-queue';

const REDIS_DBS = Array.from({ length: 16 }, (_, i) => String(i)) as readonly string[];

export const verifierConfigSchema = defineConfig({
  prefix: 'VERIFIER',
  options: {
    redisHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'Redis holding the password queue' }),
    redisPort: int({ default: 6379, min: 1, max: 65_535, why: 'Redis TCP port' }),
    redisDb: oneOf({ default: '0', values: REDIS_DBS, why: 'Redis logical database' }),
    redisUsername: string({ default: '', maxLengthChars: 255, why: 'Redis ACL user (empty: default user)' }),
    redisPassword: string({ default: '', maxLengthChars: 1024, secret: true, why: 'Redis password (empty: none)' }),
    redisTls: bool({ default: false, why: 'connect to Redis over TLS' }),
    redisConnectTimeoutMs: int({ default: 5000, min: 100, max: 60_000, why: 'give up one connection attempt after this' }),
    queuePrefix: string({ default: 'ward', pattern: /^[A-Za-z0-9._-]{1,64}$/, why: 'key prefix shared with the gateways' }),
    queueName: string({ default: PASSWORD_QUEUE_NAME, pattern: /^[A-Za-z0-9._-]{1,64}$/, why: 'queue shared with the gateways' }),
    payloadKeys: string({
      default: '',
      maxLengthChars: 1024,
      secret: true,
      why: 'sealing keys shared with the gateways, id:base64url[,id:base64url…] (see --generate-payload-key)',
    }),
    bcryptCost: int({ default: BCRYPT_DEFAULT_COST, min: BCRYPT_MIN_COST, max: BCRYPT_MAX_COST, why: 'log2 rounds of new hashes (etcd --bcrypt-cost)' }),
    bcryptMaxVerifyCost: int({
      default: DEFAULT_MAX_VERIFY_COST,
      min: BCRYPT_MIN_COST,
      max: BCRYPT_MAX_COST,
      why: 'stored hashes above this cost are refused instead of blocking a thread for minutes',
    }),
    concurrencyCount: int({ default: 4, min: 1, max: 64, why: 'jobs at once; keep ≤ UV_THREADPOOL_SIZE (bcrypt runs on libuv threads)' }),
    lockDurationMs: int({ default: 10_000, min: 1000, max: 600_000, why: 'a crashed worker’s jobs are retried after this' }),
    stalledIntervalMs: int({ default: 5000, min: 500, max: 600_000, why: 'how often stalled jobs are looked for' }),
    maxStalledCount: int({ default: 2, min: 1, max: 10, why: 'worker crashes a job survives before it fails' }),
    jobTimeoutMs: int({ default: 30_000, min: 100, max: 600_000, why: 'a job not done in this fails its try' }),
    drainDelaySeconds: int({ default: 5, min: 1, max: 60, why: 'blocking wait for new jobs on an empty queue' }),
    failedRetentionSeconds: int({ default: 3600, min: 1, max: 7 * 24 * 3600, why: 'failed jobs (sealed) kept for diagnosis at most this long' }),
    failedRetentionCount: int({ default: 1000, min: 0, max: 100_000, why: 'failed jobs kept at most' }),
    httpHost: string({ default: '127.0.0.1', maxLengthChars: 255, why: 'address of /healthz, /readyz and /metrics' }),
    httpPort: int({ default: 9471, min: 0, max: 65_535, why: 'port of /healthz, /readyz and /metrics (0: any free port)' }),
    shutdownGraceMs: int({ default: 30_000, min: 0, max: 600_000, why: 'running jobs get this long to finish on SIGTERM' }),
    workerName: string({ default: '', maxLengthChars: 128, pattern: /^[A-Za-z0-9._:-]*$/, why: 'name on processed jobs (empty: host and pid)' }),
    logLevel: oneOf({ default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], why: 'log verbosity' }),
  },
  validate: (config) => {
    const problems: string[] = [];
    if (config.payloadKeys.length === 0) problems.push('VERIFIER_PAYLOAD_KEYS is required (generate one with --generate-payload-key)');
    else {
      try {
        parseSealingKeys(config.payloadKeys);
      } catch (error) {
        problems.push(`VERIFIER_PAYLOAD_KEYS: ${(error as Error).message}`);
      }
    }
    if (config.bcryptMaxVerifyCost < config.bcryptCost) problems.push('VERIFIER_BCRYPT_MAX_VERIFY_COST must be ≥ VERIFIER_BCRYPT_COST');
    if (config.stalledIntervalMs > config.lockDurationMs) problems.push('VERIFIER_STALLED_INTERVAL_MS must be ≤ VERIFIER_LOCK_DURATION_MS');
    if (config.jobTimeoutMs >= config.lockDurationMs * 10) problems.push('VERIFIER_JOB_TIMEOUT_MS must be < 10 × VERIFIER_LOCK_DURATION_MS');
    return problems;
  },
});

export type VerifierConfig = ConfigValues<(typeof verifierConfigSchema)['options']>;
