import { CoverageIndex } from './coverage-index';
import { grantsRead, grantsWrite, isOpenEnded, permissionInterval, type Access, type Permission } from './permission';

/**
 * One user's merged READ and WRITE key ranges over all the roles it holds (etcd's
 * `unifiedRangePermissions`), updated permission by permission instead of rebuilt.
 */
export class UserAccess {
  readonly read = new CoverageIndex();
  readonly write = new CoverageIndex();

  addPermission(permission: Permission): void {
    this.apply(permission, 1);
  }

  removePermission(permission: Permission): void {
    this.apply(permission, -1);
  }

  addAll(permissions: readonly Permission[]): void {
    for (const permission of permissions) this.apply(permission, 1);
  }

  removeAll(permissions: readonly Permission[]): void {
    for (const permission of permissions) this.apply(permission, -1);
  }

  /**
   * etcd's `isRangeOpPermitted` for a non-root user: a single key when `rangeEnd` is empty, the open
   * range from `key` when it is 0x00, otherwise `[key, rangeEnd)`.
   */
  permits(access: Access, key: Uint8Array, rangeEnd: Uint8Array): boolean {
    const index = access === 'read' ? this.read : this.write;
    if (rangeEnd.length === 0) return index.coversKey(key);
    return index.coversRange(key, isOpenEnded(rangeEnd) ? null : rangeEnd);
  }

  private apply(permission: Permission, direction: 1 | -1): void {
    const read = grantsRead(permission.permType);
    const write = grantsWrite(permission.permType);
    if (!read && !write) return;
    const { begin, end } = permissionInterval(permission);
    if (read) this.change(this.read, begin, end, direction);
    if (write) this.change(this.write, begin, end, direction);
  }

  private change(index: CoverageIndex, begin: Uint8Array, end: Uint8Array | null, direction: 1 | -1): void {
    if (direction === 1) index.add(begin, end);
    else index.remove(begin, end);
  }
}
