// Names and passwords of Auth requests as the client sent them: passwords keep every byte, names
// must be UTF-8 and are refused with etcd-style InvalidArgument texts otherwise.
import { describe, expect, it } from 'vitest';
import { isWireError } from '@ward/etcd/wire-errors';
import { nameOrUndefined, nameText, passwordBytes } from './auth-fields';

describe('passwordBytes', () => {
  it('copies every byte, invalid UTF-8 and NUL included', () => {
    const sent = Buffer.from([0x41, 0xff, 0xfe, 0x80, 0x00, 0xc3, 0x42, 0x9f, 0xa0]);
    const password = passwordBytes(sent);
    expect([...password]).toEqual([...sent]);
    password.fill(0);
    expect(sent[0]).toBe(0x41);
  });

  it('treats a missing field as the empty password and a string as its UTF-8 bytes', () => {
    expect(passwordBytes(undefined)).toEqual(new Uint8Array(0));
    expect(passwordBytes(null)).toEqual(new Uint8Array(0));
    expect([...passwordBytes('é')]).toEqual([0xc3, 0xa9]);
  });
});

describe('nameText', () => {
  it('decodes valid UTF-8 exactly (a leading BOM, NUL and U+FFFD itself are kept)', () => {
    expect(nameText(Buffer.from('alice'), 'user')).toBe('alice');
    expect(nameText(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), 'user')).toBe('\ufeffa');
    expect(nameText(Buffer.from([0x61, 0x00]), 'user')).toBe('a\u0000');
    expect(nameText(Buffer.from('u\ufffd'), 'user')).toBe('u\ufffd');
    expect(nameText(Buffer.from('пользователь🔑'), 'role')).toBe('пользователь🔑');
    expect(nameText(Buffer.alloc(0), 'user')).toBe('');
    expect(nameText(undefined, 'user')).toBe('');
  });

  it.each([
    ['a lone 0xff', [0x75, 0xff]],
    ['a lone 0xfe', [0x75, 0xfe]],
    ['a truncated sequence', [0x75, 0xc3]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('refuses %s with InvalidArgument, naming the kind of name', (_case, bytes) => {
    const refuse = (kind: 'user' | 'role'): unknown => {
      try {
        nameText(Buffer.from(bytes), kind);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const user = refuse('user');
    expect(isWireError(user, 'UserNameNotUtf8')).toBe(true);
    expect((user as Error).message).toBe('etcdserver: user name is not valid UTF-8');
    expect(isWireError(refuse('role'), 'RoleNameNotUtf8')).toBe(true);
    expect(nameOrUndefined(Buffer.from(bytes))).toBeUndefined();
  });

  it('refuses a string holding a lone surrogate (it has no UTF-8 form)', () => {
    expect(nameOrUndefined('u\udcff')).toBeUndefined();
    expect(() => nameText('u\ud800', 'role')).toThrow('etcdserver: role name is not valid UTF-8');
  });

  it('never maps two different byte names to one text', () => {
    const names = [[0x75, 0xff], [0x75, 0xfe], [0x75, 0xef, 0xbf, 0xbd], [0x75]].map((bytes) => nameOrUndefined(Buffer.from(bytes)));
    const accepted = names.filter((name) => name !== undefined);
    expect(new Set(accepted).size).toBe(accepted.length);
    expect(accepted).toEqual(['u\ufffd', 'u']);
  });
});
