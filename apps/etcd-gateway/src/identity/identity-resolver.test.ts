import { describe, expect, it } from 'vitest';
import { isWireError } from '@ward/etcd/wire-errors';
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
    expect(await resolver.identify(undefined)).toMatchObject({ username: '', authRevision: 0 });
    expect(probes).toHaveLength(0);
    expect(verified).toHaveLength(0);
  });

  it('a valid token gives its identity without asking whether auth is enabled', async () => {
    const { resolver, probes } = setup({ enabled: true, valid: { good: { username: 'alice', authRevision: 7 } } });
    expect(await resolver.identify('good')).toMatchObject({ username: 'alice', authRevision: 7 });
    expect(probes).toHaveLength(0);
  });

  it('an invalid token while auth is enabled: invalid auth token', async () => {
    const { resolver } = setup({ enabled: true });
    const error = await resolver.identify('garbage').catch((e: unknown) => e);
    expect(isWireError(error, 'InvalidAuthToken')).toBe(true);
  });

  it('an invalid token while auth is disabled is ignored (3.4.28+/3.5.10+/3.7)', async () => {
    const { resolver } = setup({ enabled: false });
    expect(await resolver.identify('garbage')).toMatchObject({ username: '', authRevision: 0 });
  });

  it('asks afresh every time: a token ignored while disabled is refused right after AuthEnable', async () => {
    const { resolver, probes, state } = setup({ enabled: false });
    expect(await resolver.identify('a')).toMatchObject({ username: '' });
    state.enabled = true;
    await expect(resolver.identify('a')).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(probes).toHaveLength(2);
  });

  it('never caches "enabled": every invalid token re-asks (enabling must bite at once)', async () => {
    const { resolver, probes } = setup({ enabled: true });
    await resolver.identify('x').catch(() => undefined);
    await resolver.identify('y').catch(() => undefined);
    expect(probes).toHaveLength(2);
  });

  it('refuses over-long tokens without a lookup', async () => {
    const { resolver, verified } = setup({ enabled: true });
    await expect(resolver.identify('x'.repeat(10_000))).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(verified).toHaveLength(0);
  });
});
