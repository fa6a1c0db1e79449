import { describe, expect, it } from 'vitest';
import { Applier } from './applier';
import { Harness, fakeHash, standardSetup } from './testing';

const PREFIX = 'abcdefghijklmnop';

describe('Applier: simple tokens per user', () => {
  const login = (h: ReturnType<typeof standardSetup>, name: string): string => {
    const issued = h.must('', { type: 'authenticate', request: { name, simpleTokenPrefix: PREFIX } });
    return issued.ok && issued.result.type === 'authenticate' ? issued.result.response.token : '';
  };

  it('a user with no roles authenticating in a loop does not log anybody else out', () => {
    const h = standardSetup({ maxSimpleTokens: 20, maxSimpleTokensPerUser: 5 });
    h.must('root', { type: 'userAdd', request: { name: 'loop', passwordHash: fakeHash(3), noPassword: false } });
    const alice = login(h, 'test-user');
    for (let i = 0; i < 100; i++) login(h, 'loop');
    expect(h.applier.resolveSimpleToken(alice)).toMatchObject({ username: 'test-user' });
    const last = login(h, 'loop');
    expect(h.applier.resolveSimpleToken(last)).toMatchObject({ username: 'loop' });
  });

  it('the bounds survive a snapshot: the restored state machine evicts exactly as the original', () => {
    const options = { maxSimpleTokens: 8, maxSimpleTokensPerUser: 5 };
    const h = standardSetup(options);
    for (let i = 0; i < 7; i++) login(h, 'test-user');
    for (let i = 0; i < 3; i++) login(h, 'root');
    const copy = new Harness(options, Applier.restore(h.applier.snapshot(), options));
    expect(copy.applier.stateHash()).toBe(h.applier.stateHash());
    for (let i = 0; i < 4; i++) expect(login(copy, 'root')).toBe(login(h, 'root'));
    expect(copy.applier.snapshot()).toEqual(h.applier.snapshot());
  });
});
