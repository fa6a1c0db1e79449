import { AccessIndex } from './access-index';
import { grantsRead, grantsWrite, type Access, type Permission } from './permission';

/**
 * One user's merged READ and WRITE key ranges over all the roles it holds (etcd's
 * `unifiedRangePermissions`), updated permission by permission instead of rebuilt.
 */
export class UserAccess {
  readonly read = new AccessIndex();
  readonly write = new AccessIndex();

  addPermission(permission: Permission): void {
    if (grantsRead(permission.permType)) this.read.add(permission);
    if (grantsWrite(permission.permType)) this.write.add(permission);
  }

  removePermission(permission: Permission): void {
    if (grantsRead(permission.permType)) this.read.remove(permission);
    if (grantsWrite(permission.permType)) this.write.remove(permission);
  }

  addAll(permissions: readonly Permission[]): void {
    for (const permission of permissions) this.addPermission(permission);
  }

  removeAll(permissions: readonly Permission[]): void {
    for (const permission of permissions) this.removePermission(permission);
  }

  /**
   * etcd's `isRangeOpPermitted` for a non-root user: a single key when `rangeEnd` is empty, the open
   * range from `key` when it is 0x00, otherwise `[key, rangeEnd)`.
   */
  permits(access: Access, key: Uint8Array, rangeEnd: Uint8Array): boolean {
    return (access === 'read' ? this.read : this.write).permits(key, rangeEnd);
  }
}
