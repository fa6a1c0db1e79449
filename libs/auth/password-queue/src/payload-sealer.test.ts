import { describe, expect, it } from 'vitest';
import { PayloadSealer, generateSealingKeyEntry, newRequestId, parseSealingKeys } from './index';

const keys = parseSealingKeys(`${generateSealingKeyEntry('k2')},${generateSealingKeyEntry('k1')}`);
const sealer = new PayloadSealer(keys);
const plaintext = new TextEncoder().encode('correct horse battery staple');

function sealed(requestId = newRequestId(), associatedData = 'aad') {
  return { requestId, associatedData, ...sealer.seal({ keyId: 'k2', requestId, direction: 'request', associatedData, plaintext }) };
}

describe('PayloadSealer', () => {
  it('round-trips, and the first key of the ring is the active one', () => {
    expect(sealer.activeKeyId).toBe('k2');
    const message = sealed();
    expect(sealer.open({ ...message, direction: 'request' })).toEqual(plaintext);
    expect(Buffer.from(message.sealed, 'base64url').length).toBe(plaintext.length + 16);
  });

  it('never puts the plaintext (or its base64) in the sealed form', () => {
    const message = sealed();
    const stored = JSON.stringify(message);
    expect(stored).not.toContain('correct horse');
    expect(stored).not.toContain(Buffer.from(plaintext).toString('base64url').slice(0, 12));
  });

  it('uses a fresh nonce each time (same input, different ciphertext)', () => {
    const requestId = newRequestId();
    expect(sealed(requestId).sealed).not.toBe(sealed(requestId).sealed);
  });

  it.each([
    ['another associated data', (m: ReturnType<typeof sealed>) => ({ ...m, associatedData: 'other' })],
    ['another request id', (m: ReturnType<typeof sealed>) => ({ ...m, requestId: newRequestId() })],
    ['another direction', (m: ReturnType<typeof sealed>) => ({ ...m, direction: 'result' as const })],
    ['another key id', (m: ReturnType<typeof sealed>) => ({ ...m, keyId: 'k1' })],
    ['an unknown key id', (m: ReturnType<typeof sealed>) => ({ ...m, keyId: 'k9' })],
    ['a flipped ciphertext bit', (m: ReturnType<typeof sealed>) => {
      const bytes = Buffer.from(m.sealed, 'base64url');
      bytes[0]! ^= 1;
      return { ...m, sealed: bytes.toString('base64url') };
    }],
    ['a truncated tag', (m: ReturnType<typeof sealed>) => ({ ...m, sealed: m.sealed.slice(0, -4) })],
    ['a short nonce', (m: ReturnType<typeof sealed>) => ({ ...m, nonce: 'AAAA' })],
    ['a malformed request id', (m: ReturnType<typeof sealed>) => ({ ...m, requestId: 'short' })],
  ])('refuses to open with %s', (_name, change) => {
    const message = { ...sealed(), direction: 'request' as const };
    expect(sealer.open(change(message as ReturnType<typeof sealed>) as Parameters<PayloadSealer['open']>[0])).toBeUndefined();
  });

  it('opens with an older key still in the ring (rotation)', () => {
    const old = new PayloadSealer([keys[1]!]);
    const requestId = newRequestId();
    const message = old.seal({ keyId: 'k1', requestId, direction: 'result', associatedData: 'x', plaintext });
    expect(sealer.open({ ...message, requestId, direction: 'result', associatedData: 'x' })).toEqual(plaintext);
  });
});

describe('parseSealingKeys', () => {
  it.each([
    ['empty', ''],
    ['no colon', 'abc'],
    ['empty id', `:${'A'.repeat(43)}`],
    ['short key', 'k1:AAAA'],
    ['standard base64 characters', `k1:${'A'.repeat(42)}+`],
    ['a bad id', `k 1:${'A'.repeat(43)}`],
    ['nine keys', Array.from({ length: 9 }, (_, i) => generateSealingKeyEntry(`k${i}`)).join(',')],
  ])('refuses %s without echoing the key', (_name, text) => {
    let message = '';
    try {
      parseSealingKeys(text);
    } catch (error) {
      message = (error as Error).message;
      expect(error).toBeInstanceOf(TypeError);
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('AAAA');
  });

  it('refuses duplicate ids and wrong key lengths in the constructor', () => {
    expect(() => new PayloadSealer([keys[0]!, keys[0]!])).toThrow(TypeError);
    expect(() => new PayloadSealer([{ keyId: 'k', key: new Uint8Array(16) }])).toThrow(TypeError);
    expect(() => new PayloadSealer([])).toThrow(TypeError);
  });
});
