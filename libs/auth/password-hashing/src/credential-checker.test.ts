import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { PasswordError, bcryptHashCost, type PasswordVerifier } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier, CredentialChecker } from './index';

/** Records which hashes the checker verified against (the real bcrypt does the work). */
class RecordingVerifier implements PasswordVerifier {
  readonly verifiedHashes: Uint8Array[] = [];
  constructor(private readonly inner: PasswordVerifier) {}
  hash(password: Uint8Array): Promise<Uint8Array> {
    return this.inner.hash(password);
  }
  verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    this.verifiedHashes.push(hash);
    return this.inner.verify(password, hash);
  }
}

/** A tier that is down (TIER_FAILED) until `up` is set, then bcrypt. */
class OutageVerifier implements PasswordVerifier {
  up = false;
  hashes = 0;
  private readonly inner = new BcryptPasswordVerifier({ cost: 4 });
  hash(password: Uint8Array): Promise<Uint8Array> {
    this.hashes += 1;
    return this.up ? this.inner.hash(password) : Promise.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'redis-unreachable' }));
  }
  verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    return this.up ? this.inner.verify(password, hash) : Promise.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'redis-unreachable' }));
  }
}

describe('CredentialChecker', () => {
  it('is created over a tier that is down, fails its checks with the tier error, and makes the dummy once the tier is up', async () => {
    const tier = new OutageVerifier();
    const checker = await CredentialChecker.create(tier);
    await expect(checker.check(utf8('guess'), { kind: 'unknown-user' })).rejects.toMatchObject({ code: 'ERR_AUTH_PASSWORD_TIER_FAILED' });
    tier.up = true;
    expect(await checker.check(utf8('guess'), { kind: 'unknown-user' })).toBe('mismatch');
    expect(await checker.check(utf8('guess'), { kind: 'unknown-user' })).toBe('mismatch');
    expect(tier.hashes).toBe(3); // at create, at the first check (down), then once for good
  });

  it('still fails its creation on an error that is not the tier’s', async () => {
    const broken: PasswordVerifier = { hash: () => Promise.reject(new TypeError('bug')), verify: async () => false };
    await expect(CredentialChecker.create(broken)).rejects.toThrow(TypeError);
  });

  it('answers match / mismatch / no-password-user like etcd CheckPassword', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 4 });
    const checker = await CredentialChecker.create(verifier);
    const hash = await verifier.hash(utf8('s3cret'));
    expect(await checker.check(utf8('s3cret'), { kind: 'password', hash })).toBe('match');
    expect(await checker.check(utf8('wrong'), { kind: 'password', hash })).toBe('mismatch');
    expect(await checker.check(utf8('anything'), { kind: 'no-password' })).toBe('no-password-user');
    expect(await checker.check(utf8(''), { kind: 'no-password' })).toBe('no-password-user');
  });

  it('spends one bcrypt verification at the configured cost on an unknown user, then says mismatch', async () => {
    const recording = new RecordingVerifier(new BcryptPasswordVerifier({ cost: 5 }));
    const checker = await CredentialChecker.create(recording);
    expect(await checker.check(utf8('guess'), { kind: 'unknown-user' })).toBe('mismatch');
    expect(recording.verifiedHashes).toHaveLength(1);
    expect(bcryptHashCost(recording.verifiedHashes[0]!)).toBe(5);
    // The same dummy every time (made once, at construction).
    await checker.check(utf8('guess again'), { kind: 'unknown-user' });
    expect(recording.verifiedHashes[1]).toEqual(recording.verifiedHashes[0]);
  });

  it('makes a malformed stored hash cost a dummy verification too, and reports it', async () => {
    const recording = new RecordingVerifier(new BcryptPasswordVerifier({ cost: 4 }));
    const checker = await CredentialChecker.create(recording);
    expect(await checker.check(utf8('x'), { kind: 'password', hash: utf8('not a hash') })).toBe('malformed-hash');
    expect(recording.verifiedHashes).toHaveLength(2);
    expect(bcryptHashCost(recording.verifiedHashes[1]!)).toBe(4);
  });

  it('spends about as much work on an unknown user as on a wrong password (cost 8, medians of CPU time)', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 8 });
    const checker = await CredentialChecker.create(verifier);
    const hash = await verifier.hash(utf8('real password'));
    // CPU time of the whole process (bcrypt runs on libuv's thread pool), not wall time: what a
    // caller could time is the work done, and wall time on a shared machine is mostly the others'.
    const median = async (stored: Parameters<CredentialChecker['check']>[1]): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i < 7; i++) {
        const before = process.cpuUsage();
        await checker.check(utf8('wrong password'), stored);
        const spent = process.cpuUsage(before);
        samples.push((spent.user + spent.system) / 1000);
      }
      return samples.sort((a, b) => a - b)[3]!;
    };
    const wrongPasswordMs = await median({ kind: 'password', hash });
    const unknownUserMs = await median({ kind: 'unknown-user' });
    // Without the dummy verification an unknown user answers in well under a millisecond.
    expect(unknownUserMs).toBeGreaterThan(wrongPasswordMs * 0.5);
    expect(unknownUserMs).toBeLessThan(wrongPasswordMs * 2);
  });
});
