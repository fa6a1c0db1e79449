// Auth requests decoded with their string fields as bytes: whatever the client sent, invalid UTF-8
// included, arrives unchanged; the other services and the responses decode as before.
import { describe, expect, it } from 'vitest';
import { etcdServiceDefinition, etcdServiceDefinitionWithRawAuthStrings } from './index';

type Method = { requestDeserialize(b: Buffer): unknown; requestSerialize(v: unknown): Buffer; responseDeserialize(b: Buffer): unknown };
const method = (definition: Record<string, unknown>, name: string): Method => definition[name] as Method;

/** A length-delimited field under 128 bytes. */
const field = (number: number, bytes: readonly number[]): number[] => [(number << 3) | 2, bytes.length, ...bytes];

describe('etcdServiceDefinitionWithRawAuthStrings', () => {
  const raw = etcdServiceDefinitionWithRawAuthStrings('Auth') as unknown as Record<string, unknown>;
  const plain = etcdServiceDefinition('Auth') as unknown as Record<string, unknown>;

  it('keeps the exact bytes of name and password, where the string decoding replaces them with U+FFFD', () => {
    const password = [0x41, 0xff, 0xfe, 0x80, 0xc3, 0x42, 0x9f, 0xa0];
    const bytes = Buffer.from([...field(1, [0x75, 0xff]), ...field(2, password)]);
    const decoded = method(raw, 'Authenticate').requestDeserialize(bytes) as { name: Buffer; password: Buffer };
    expect(Buffer.isBuffer(decoded.name)).toBe(true);
    expect([...decoded.name]).toEqual([0x75, 0xff]);
    expect([...decoded.password]).toEqual(password);
    const lossy = method(plain, 'Authenticate').requestDeserialize(bytes) as { name: string };
    expect(lossy.name).toBe('u\ufffd');
  });

  it('turns every string field of every Auth request into bytes, and only those', () => {
    const grant = method(raw, 'UserGrantRole').requestDeserialize(Buffer.from([...field(1, [0x61]), ...field(2, [0x72, 0xc3])])) as Record<string, unknown>;
    expect(grant).toEqual({ user: Buffer.from([0x61]), role: Buffer.from([0x72, 0xc3]) });
    const add = method(raw, 'UserAdd').requestDeserialize(Buffer.from(field(1, [0x62]))) as Record<string, unknown>;
    expect(add).toEqual({ name: Buffer.from('b'), password: Buffer.alloc(0), options: null });
    // A response is untouched: its strings are strings.
    const list = method(raw, 'UserList').responseDeserialize(Buffer.from(field(2, [0x61]))) as { users: unknown[] };
    expect(list.users).toEqual(['a']);
  });

  it('leaves the other services as they are', () => {
    expect(etcdServiceDefinitionWithRawAuthStrings('KV')).toBeDefined();
    const put = method(etcdServiceDefinitionWithRawAuthStrings('KV') as unknown as Record<string, unknown>, 'Put');
    expect((put.requestDeserialize(Buffer.from(field(1, [0x6b]))) as { key: Buffer }).key).toEqual(Buffer.from('k'));
  });
});
