import { describe, expect, it } from 'vitest';
import { toPasswordHash, type ApplyOperation } from '@ward/etcd/apply';
import {
  authOperationToProto,
  permissionFromProto,
  roleAddOperation,
  roleDeleteOperation,
  roleGetOperation,
  roleGrantPermissionOperation,
  roleRevokePermissionOperation,
  userAddOperation,
  userChangePasswordOperation,
  userDeleteOperation,
  userGetOperation,
  userGrantRoleOperation,
  userRevokeRoleOperation,
} from './auth-request';
import { ApiMappingError } from './errors';
import { normalize } from './test/arbitraries';
import { requestViaWire } from './test/wire';

const HASH = toPasswordHash(new TextEncoder().encode('$2b$10$C6UzMDM.H6dfI/f/IKxGhu8ATXq6Yn3ML9bL1rJ6GyqW3G1P4WgD6'));
const b = (text: string): Buffer => Buffer.from(text);

describe('Auth requests → operations', () => {
  const cases: { method: string; request: object; map: (decoded: never) => ApplyOperation; expected: ApplyOperation }[] = [
    { method: 'UserGet', request: { name: 'alice' }, map: userGetOperation, expected: { type: 'userGet', request: { name: 'alice' } } },
    { method: 'UserDelete', request: { name: 'alice' }, map: userDeleteOperation, expected: { type: 'userDelete', request: { name: 'alice' } } },
    { method: 'UserGrantRole', request: { user: 'alice', role: 'r' }, map: userGrantRoleOperation, expected: { type: 'userGrantRole', request: { user: 'alice', role: 'r' } } },
    { method: 'UserRevokeRole', request: { name: 'alice', role: 'r' }, map: userRevokeRoleOperation, expected: { type: 'userRevokeRole', request: { name: 'alice', role: 'r' } } },
    { method: 'RoleAdd', request: { name: 'r' }, map: roleAddOperation, expected: { type: 'roleAdd', request: { name: 'r' } } },
    { method: 'RoleGet', request: { role: 'r' }, map: roleGetOperation, expected: { type: 'roleGet', request: { role: 'r' } } },
    { method: 'RoleDelete', request: { role: 'r' }, map: roleDeleteOperation, expected: { type: 'roleDelete', request: { role: 'r' } } },
    { method: 'RoleGet', request: {}, map: roleGetOperation, expected: { type: 'roleGet', request: { role: '' } } },
    {
      method: 'RoleGrantPermission',
      request: { name: 'r', perm: { permType: 'Write', key: b('a'), range_end: b('b') } },
      map: roleGrantPermissionOperation,
      expected: { type: 'roleGrantPermission', request: { name: 'r', perm: { permType: 1, key: b('a'), rangeEnd: b('b') } } },
    },
    {
      method: 'RoleGrantPermission',
      request: { name: 'r' },
      map: roleGrantPermissionOperation,
      expected: { type: 'roleGrantPermission', request: { name: 'r', perm: null } },
    },
    {
      method: 'RoleRevokePermission',
      request: { role: 'r', key: b('a'), range_end: b('\0') },
      map: roleRevokePermissionOperation,
      expected: { type: 'roleRevokePermission', request: { role: 'r', key: b('a'), rangeEnd: b('\0') } },
    },
  ];
  for (const c of cases) {
    it(`${c.method} ${JSON.stringify(c.request)}`, () => {
      const decoded = requestViaWire<never>('Auth', c.method, c.request);
      const operation = c.map(decoded);
      expect(normalize(operation)).toEqual(normalize(c.expected));
      // and back: the operation's etcd request carries the same fields
      const { typeName, message } = authOperationToProto(operation);
      expect(typeName).toBe(`etcdserverpb.Auth${c.method === 'Authenticate' ? '' : c.method}Request`);
      expect(normalize(c.map(requestViaWire<never>('Auth', c.method, message)))).toEqual(normalize(c.expected));
    });
  }

  it('UserAdd carries the gateway-computed hash, never the plaintext', () => {
    const decoded = requestViaWire<never>('Auth', 'UserAdd', { name: 'alice', password: 'secret' });
    const operation = userAddOperation(decoded, HASH);
    expect(operation).toEqual({ type: 'userAdd', request: { name: 'alice', passwordHash: HASH, noPassword: false } });
    expect(JSON.stringify(normalize(operation))).not.toContain('secret');
  });

  it('UserAdd with no_password stores no hash; a password user without a hash is a caller bug', () => {
    const noPassword = requestViaWire<never>('Auth', 'UserAdd', { name: 'bot', password: 'ignored', options: { no_password: true } });
    expect(userAddOperation(noPassword, HASH)).toEqual({ type: 'userAdd', request: { name: 'bot', passwordHash: null, noPassword: true } });
    const withPassword = requestViaWire<never>('Auth', 'UserAdd', { name: 'alice', password: 'x' });
    expect(() => userAddOperation(withPassword, null)).toThrow(TypeError);
  });

  it('UserChangePassword with a hash or etcd empty hash', () => {
    const decoded = requestViaWire<never>('Auth', 'UserChangePassword', { name: 'alice', password: '' });
    expect(userChangePasswordOperation(decoded, null)).toEqual({ type: 'userChangePassword', request: { name: 'alice', passwordHash: null } });
  });

  it('keeps an unknown permission type number as etcd stores it, refuses a non-integer', () => {
    expect(permissionFromProto({ permType: 7 as never, key: b('a'), range_end: Buffer.alloc(0) }).permType).toBe(7);
    expect(permissionFromProto({ permType: 'READWRITE' as never, key: b('a'), range_end: Buffer.alloc(0) }).permType).toBe(2);
    expect(() => permissionFromProto({ permType: 'Admin' as never, key: b('a'), range_end: Buffer.alloc(0) })).toThrow(ApiMappingError);
  });
});
