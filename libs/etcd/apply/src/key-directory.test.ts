// The signing-key directory through the applier: admin-only publish and revoke, a public list
// answered with the auth revision, revocation that invalidates earlier tokens and can never be
// undone by re-publishing, deterministic retirement by the proposer's time, and a snapshot that
// keeps its old format (and hash) while the directory is empty.
import { describe, expect, it } from 'vitest';
import { Applier } from './applier';
import type { SigningKeyRecord } from './key-directory';
import type { ApplyResult } from './response';
import { Harness, outcome, standardSetup } from './testing';

const JWK = (x: string): string => JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x });
const key = (keyId: string, overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord => ({
  keyId,
  alg: 'EdDSA',
  publicJwk: JWK(keyId),
  notBeforeSeconds: 1000,
  retireAfterSeconds: 2000,
  ...overrides,
});

function listed(result: ApplyResult): { ids: string[]; authRevision: number } {
  if (!result.ok || result.result.type !== 'signingKeyList') throw new Error('not a list answer');
  return { ids: result.result.response.keys.map((k) => k.keyId), authRevision: result.result.response.authRevision };
}

describe('signing-key directory', () => {
  it('publish is admin-only; anyone lists; the list carries the auth revision', () => {
    const h = standardSetup();
    expect(outcome(h.run('test-user', { type: 'signingKeyPublish', request: { key: key('k1'), nowSeconds: 1000 } }))).toBe('PermissionDenied');
    h.must('root', { type: 'signingKeyPublish', request: { key: key('k1'), nowSeconds: 1000 } });
    expect(listed(h.run('', { type: 'signingKeyList' }, 0))).toEqual({ ids: ['k1'], authRevision: h.revision });
  });

  it('revocation removes the key, bumps the auth revision (earlier tokens go stale) and is final', () => {
    const h = standardSetup();
    h.must('root', { type: 'signingKeyPublish', request: { key: key('k1'), nowSeconds: 1000 } });
    const before = h.revision;
    expect(outcome(h.run('test-user', { type: 'signingKeyRevoke', request: { keyId: 'k1' } }))).toBe('PermissionDenied');
    h.must('root', { type: 'signingKeyRevoke', request: { keyId: 'k1' } });
    expect(h.revision).toBe(before + 1);
    expect(listed(h.run('', { type: 'signingKeyList' }, 0)).ids).toEqual([]);
    // A token minted at the old revision is now refused at apply.
    expect(outcome(h.run('test-user', { type: 'range', request: { key: new TextEncoder().encode('foo') } }, before))).toBe('AuthOldRevision');
    expect(outcome(h.run('root', { type: 'signingKeyPublish', request: { key: key('k1'), nowSeconds: 1000 } }))).toBe('SigningKeyRevoked');
    expect(outcome(h.run('root', { type: 'signingKeyRevoke', request: { keyId: 'k1' } }))).toBe('SigningKeyNotFound');
  });

  it('refuses private or secret JWK members, symmetric algorithms, a reused id with another key', () => {
    const h = standardSetup();
    const publish = (record: SigningKeyRecord) => outcome(h.run('root', { type: 'signingKeyPublish', request: { key: record, nowSeconds: 1000 } }));
    expect(publish(key('k1', { publicJwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'a', d: 'secret' }) }))).toBe('SigningKeyInvalid');
    expect(publish(key('k2', { alg: 'HS256', publicJwk: JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' }) }))).toBe('SigningKeyInvalid');
    expect(publish(key('bad kid'))).toBe('SigningKeyInvalid');
    expect(publish(key('k3'))).toBe('ok');
    expect(publish(key('k3', { publicJwk: JWK('other') }))).toBe('SigningKeyConflict');
    expect(publish(key('k3', { retireAfterSeconds: 3000 }))).toBe('ok');
  });

  it('a publish drops keys retired before the proposer’s time', () => {
    const h = standardSetup();
    h.must('root', { type: 'signingKeyPublish', request: { key: key('old', { retireAfterSeconds: 1500 }), nowSeconds: 1000 } });
    h.must('root', { type: 'signingKeyPublish', request: { key: key('new', { notBeforeSeconds: 1400, retireAfterSeconds: 3000 }), nowSeconds: 1600 } });
    expect(listed(h.run('', { type: 'signingKeyList' }, 0)).ids).toEqual(['new']);
  });

  it('snapshot: version 1 bytes while empty, version 2 with the directory, restored identically', () => {
    const h = standardSetup();
    expect(h.applier.snapshot()[4]).toBe(1);
    h.must('root', { type: 'signingKeyPublish', request: { key: key('k1'), nowSeconds: 1000 } });
    h.must('root', { type: 'signingKeyPublish', request: { key: key('k2'), nowSeconds: 1000 } });
    h.must('root', { type: 'signingKeyRevoke', request: { keyId: 'k2' } });
    const bytes = h.applier.snapshot();
    expect(bytes[4]).toBe(2);
    const restored = Applier.restore(bytes);
    expect(restored.stateHash()).toBe(h.applier.stateHash());
    // Pushed in pieces of 7 bytes (the tail with the directory cut too), the same state.
    const decoder = Applier.decoder();
    for (let at = 0; at < bytes.length; at += 7) decoder.push(bytes.subarray(at, at + 7));
    expect(Buffer.from(decoder.finish().snapshot()).equals(Buffer.from(bytes))).toBe(true);
    const again = new Harness({}, restored);
    expect(listed(again.run('', { type: 'signingKeyList' }, 0)).ids).toEqual(['k1']);
    expect(outcome(again.run('root', { type: 'signingKeyPublish', request: { key: key('k2'), nowSeconds: 1000 } }))).toBe('SigningKeyRevoked');
  });
});
