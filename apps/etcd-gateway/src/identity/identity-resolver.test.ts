import { describe, expect, it } from 'vitest';
import { isWireError } from '@ward/etcd/wire-errors';
import { ManualClock } from '@ward/shared/clock';
import { IdentityResolver } from './identity-resolver';
import type { TokenVerifier } from './token-verifier';

function setup(options: { valid?: Record<string, { username: string; authRevision: number }>; enabled: boolean }) {
  const probes: number[] = [];
  const verified: string[] = [];
  const verifier: TokenVerifier = {
    verify: async (token) => {
      verified.push(token);
      const hit = options.valid?.[token];
      return hit === undefined ? undefined : { ...hit, cached: false };
    },
    forget: () => undefined,
  };
  const state = { enabled: options.enabled };
  const resolver = new IdentityResolver(verifier, { authEnabled: async () => (probes.push(1), state.enabled) });
  return { resolver, probes, verified, state };
}

describe('IdentityResolver (etcd 3.7 AuthInfoFromCtx)', () => {
  it('no token: no identity, nothing asked', async () => {
    const { resolver, probes, verified } = setup({ enabled: true });
    expect(await resolver.identify({ token: undefined })).toMatchObject({ username: '', authRevision: 0 });
    expect(probes).toHaveLength(0);
    expect(verified).toHaveLength(0);
  });

  it('a valid token gives its identity without asking whether auth is enabled', async () => {
    const { resolver, probes } = setup({ enabled: true, valid: { good: { username: 'alice', authRevision: 7 } } });
    expect(await resolver.identify({ token: 'good' })).toMatchObject({ username: 'alice', authRevision: 7 });
    expect(probes).toHaveLength(0);
  });

  it('an invalid token while auth is enabled: invalid auth token', async () => {
    const { resolver } = setup({ enabled: true });
    const error = await resolver.identify({ token: 'garbage' }).catch((e: unknown) => e);
    expect(isWireError(error, 'InvalidAuthToken')).toBe(true);
  });

  it('an invalid token while auth is disabled is ignored (3.4.28+/3.5.10+/3.7)', async () => {
    const { resolver } = setup({ enabled: false });
    expect(await resolver.identify({ token: 'garbage' })).toMatchObject({ username: '', authRevision: 0 });
  });

  it('asks afresh every time: a token ignored while disabled is refused right after AuthEnable', async () => {
    const { resolver, probes, state } = setup({ enabled: false });
    expect(await resolver.identify({ token: 'a' })).toMatchObject({ username: '' });
    state.enabled = true;
    await expect(resolver.identify({ token: 'a' })).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(probes).toHaveLength(2);
  });

  it('never caches "enabled": every invalid token re-asks (enabling must bite at once)', async () => {
    const { resolver, probes } = setup({ enabled: true });
    await resolver.identify({ token: 'x' }).catch(() => undefined);
    await resolver.identify({ token: 'y' }).catch(() => undefined);
    expect(probes).toHaveLength(2);
  });

  it('refuses over-long tokens without a lookup', async () => {
    const { resolver, verified } = setup({ enabled: true });
    await expect(resolver.identify({ token: 'x'.repeat(10_000) })).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(verified).toHaveLength(0);
  });
});

describe('IdentityResolver: client-certificate identities (etcd AuthInfoFromTLS, --client-cert-auth)', () => {
  function withCertificates(options: { enabled: boolean; valid?: Record<string, { username: string; authRevision: number }> }) {
    const base = setup(options);
    const clock = new ManualClock();
    const revision = { value: 5, reads: 0 };
    const resolver = new IdentityResolver(
      { verify: async (token) => (options.valid?.[token] === undefined ? undefined : { ...options.valid[token]!, cached: false }), forget: () => undefined },
      { authEnabled: async () => base.state.enabled },
      { authRevision: async () => (revision.reads++, revision.value), clock, revisionCacheMs: 1000 },
    );
    return { resolver, clock, revision, state: base.state };
  }

  it('without a token the CommonName is the user, at the revision read now', async () => {
    const { resolver, revision } = withCertificates({ enabled: true });
    expect(await resolver.identify({ token: undefined, commonName: 'example.com' })).toEqual({ username: 'example.com', authRevision: 5, cached: false });
    expect(revision.reads).toBe(1);
  });

  it('a token takes precedence over the certificate', async () => {
    const { resolver, revision } = withCertificates({ enabled: true, valid: { good: { username: 'alice', authRevision: 9 } } });
    expect(await resolver.identify({ token: 'good', commonName: 'example.com' })).toMatchObject({ username: 'alice', authRevision: 9 });
    expect(revision.reads).toBe(0);
  });

  it('an invalid token is refused while auth is enabled, even with a certificate', async () => {
    const { resolver } = withCertificates({ enabled: true });
    await expect(resolver.identify({ token: 'forged', commonName: 'example.com' })).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
  });

  it('reuses a revision read for the cache time, marks it cached, and reads afresh after forget or expiry', async () => {
    const { resolver, clock, revision } = withCertificates({ enabled: true });
    const credentials = { token: undefined, commonName: 'example.com' };
    await resolver.identify(credentials);
    revision.value = 6;
    expect(await resolver.identify(credentials)).toEqual({ username: 'example.com', authRevision: 5, cached: true });
    resolver.forget(credentials);
    expect(await resolver.identify(credentials)).toEqual({ username: 'example.com', authRevision: 6, cached: false });
    revision.value = 7;
    clock.advance(1000);
    expect(await resolver.identify(credentials)).toMatchObject({ authRevision: 7, cached: false });
    expect(await resolver.identify(credentials, undefined, { fresh: true })).toMatchObject({ authRevision: 7, cached: false });
    expect(revision.reads).toBe(4);
  });

  it('concurrent callers share one revision read', async () => {
    const { resolver, revision } = withCertificates({ enabled: true });
    const credentials = { token: undefined, commonName: 'example.com' };
    const identities = await Promise.all([resolver.identify(credentials), resolver.identify(credentials), resolver.identify(credentials)]);
    expect(identities.map((identity) => identity.authRevision)).toEqual([5, 5, 5]);
    expect(revision.reads).toBe(1);
  });

  it('a CommonName is ignored when certificate identities are off', async () => {
    const { resolver } = setup({ enabled: true });
    expect(await resolver.identify({ token: undefined, commonName: 'example.com' })).toMatchObject({ username: '', authRevision: 0 });
  });
});
