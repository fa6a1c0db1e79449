import { sha256 } from '@ward/shared/digest';
import { isWellFormedText } from '@ward/shared/binary';
import {
  ROOT_ROLE,
  ROOT_USER,
  addHolder,
  emptyAuthState,
  newUserState,
  removeHolder,
  type AuthState,
  type RoleState,
  type UserState,
} from './auth-state';
import { decodeAuthSnapshot, encodeAuthSnapshot } from './auth-snapshot';
import { AuthError, type AuthErrorCode } from './errors';
import { DEFAULT_AUTH_LIMITS, resolveAuthLimits, utf8ByteLength, type AuthLimits } from './limits';
import { compareNames, searchSortedNames } from './names';
import {
  PermissionType,
  comparePermissionRanges,
  copyPermission,
  isInt32,
  isValidPermissionRange,
  type Access,
  type Permission,
} from './permission';

/** Who is asking: the request header's user name and the auth revision its token carried. */
export interface AuthIdentity {
  readonly username: string;
  readonly authRevision: number;
}

export interface UserAddInput {
  readonly name: string;
  /** The bcrypt hash bytes (hashed before the request entered the log). Ignored with noPassword. */
  readonly passwordHash: Uint8Array;
  readonly noPassword?: boolean;
}

export interface AuthStoreOptions {
  readonly limits?: Partial<AuthLimits>;
}

/** The `perm` RoleGet(root) answers with since etcd 3.6: READWRITE over every key. */
const ROOT_ROLE_PERMISSION: Permission = Object.freeze({
  permType: PermissionType.READWRITE,
  key: new Uint8Array(0),
  rangeEnd: Uint8Array.of(0),
});

/**
 * etcd's auth store (spec/etcd-auth.md §1–§3): users, roles, key permissions, the enabled flag and
 * the auth revision, with etcd's checks, errors and revision bumps, and per-user merged permission
 * indexes answering key and range checks in O(log n). Deterministic: the same operations give the
 * same snapshot bytes and state hash. Never hashes passwords: it stores the hash it is given.
 *
 * Operations throw {@link AuthError}; checks return an {@link AuthErrorCode} or `null` (allowed).
 * The admin gate is the caller's (the applier's) job, as in etcd: run {@link isAdminPermitted}
 * before an admin operation.
 */
export class AuthStore {
  private readonly state: AuthState;
  readonly limits: AuthLimits;

  constructor(options: AuthStoreOptions = {}) {
    this.limits = options.limits === undefined ? DEFAULT_AUTH_LIMITS : resolveAuthLimits(options.limits);
    this.state = emptyAuthState();
    this.state.revision = 1; // etcd's NewAuthStore: a fresh store starts at revision 1.
  }

  /** A store from {@link snapshot} bytes; throws ERR_AUTH_SNAPSHOT_INVALID for anything else. */
  static restore(snapshot: Uint8Array, options: AuthStoreOptions = {}): AuthStore {
    const store = new AuthStore(options);
    const state = decodeAuthSnapshot(snapshot, store.limits);
    store.state.enabled = state.enabled;
    store.state.revision = state.revision;
    for (const [name, role] of state.roles) store.state.roles.set(name, role);
    for (const [name, user] of state.users) store.state.users.set(name, user);
    store.rebuildDerivedState();
    return store;
  }

  // ---- status ------------------------------------------------------------------------------

  get enabled(): boolean {
    return this.state.enabled;
  }

  /** The auth revision: bumped by every successful mutation listed in spec §1.4. */
  get revision(): number {
    return this.state.revision;
  }

  // ---- enable / disable --------------------------------------------------------------------

  /** Turns auth on; a no-op when already on. Does not bump the revision. */
  authEnable(): void {
    if (this.state.enabled) return;
    const root = this.state.users.get(ROOT_USER);
    if (root === undefined) throw new AuthError('ERR_AUTH_ROOT_USER_NOT_EXIST', { user: ROOT_USER });
    if (!hasRoleName(root, ROOT_ROLE)) throw new AuthError('ERR_AUTH_ROOT_ROLE_NOT_EXIST', { user: ROOT_USER });
    this.state.enabled = true;
  }

  /**
   * ward: bumps the revision with no other change, so every token issued before (they carry an
   * older revision) is refused as stale: what revoking a token-signing key does.
   */
  invalidateTokens(): void {
    this.bump();
  }

  /** Turns auth off and bumps the revision; a no-op (no bump) when already off. */
  authDisable(): void {
    if (!this.state.enabled) return;
    this.state.enabled = false;
    this.bump();
  }

  // ---- users -------------------------------------------------------------------------------

  userAdd(input: UserAddInput): void {
    const { name } = input;
    this.checkName(name, 'user');
    const noPassword = input.noPassword === true;
    if (name === '') throw new AuthError('ERR_AUTH_USER_EMPTY');
    if (this.state.users.has(name)) throw new AuthError('ERR_AUTH_USER_ALREADY_EXIST', { user: name });
    this.checkHashSize(input.passwordHash);
    if (this.state.users.size >= this.limits.maxUsers) throw limitError('maxUsers', { user: name });
    const hash = noPassword ? new Uint8Array(0) : new Uint8Array(input.passwordHash); // a copy, even of a Buffer
    this.state.users.set(name, newUserState(name, hash, noPassword));
    this.bump();
  }

  /** Deletes a user. While auth is on, deleting `root` is refused before the lookup. */
  userDelete(name: string): void {
    if (this.state.enabled && name === ROOT_USER) throw new AuthError('ERR_AUTH_INVALID_MGMT', { user: name });
    const user = this.requireUser(name);
    for (const role of user.roles) removeHolder(this.state, role, name);
    this.state.users.delete(name);
    this.bump();
  }

  /** Replaces the password hash; a no-password user keeps no hash (and still cannot log in). */
  userChangePassword(name: string, passwordHash: Uint8Array): void {
    const user = this.requireUser(name);
    if (!user.noPassword) {
      this.checkHashSize(passwordHash);
      user.passwordHash = new Uint8Array(passwordHash);
    }
    this.bump();
  }

  /** Grants a role (which must exist, except the virtual `root`). Re-granting is a no-bump success. */
  userGrantRole(name: string, role: string): void {
    const user = this.requireUser(name);
    this.checkName(role, 'role');
    const roleState = this.state.roles.get(role);
    if (role !== ROOT_ROLE && roleState === undefined) throw new AuthError('ERR_AUTH_ROLE_NOT_FOUND', { user: name, role });
    const at = searchSortedNames(user.roles, role);
    if (at >= 0) return;
    if (user.roles.length >= this.limits.maxRolesPerUser) throw limitError('maxRolesPerUser', { user: name, role });
    user.roles.splice(-(at + 1), 0, role);
    addHolder(this.state, role, name);
    if (roleState !== undefined) user.access.addAll(roleState.permissions);
    this.bump();
  }

  /** Revokes a granted role. While auth is on, revoking `root` from `root` is refused first. */
  userRevokeRole(name: string, role: string): void {
    if (this.state.enabled && name === ROOT_USER && role === ROOT_ROLE) {
      throw new AuthError('ERR_AUTH_INVALID_MGMT', { user: name, role });
    }
    const user = this.requireUser(name);
    const at = searchSortedNames(user.roles, role);
    if (at < 0) throw new AuthError('ERR_AUTH_ROLE_NOT_GRANTED', { user: name, role });
    user.roles.splice(at, 1);
    removeHolder(this.state, role, name);
    const roleState = this.state.roles.get(role);
    if (roleState !== undefined) user.access.removeAll(roleState.permissions);
    this.bump();
  }

  /** True when a user of this name exists. */
  hasUser(name: string): boolean {
    return this.state.users.has(name);
  }

  /** The user's roles, sorted (all UserGet returns). */
  userGet(name: string): string[] {
    return [...this.requireUser(name).roles];
  }

  /** Every user name, sorted in byte order. */
  userList(): string[] {
    return [...this.state.users.keys()].sort(compareNames);
  }

  // ---- roles -------------------------------------------------------------------------------

  roleAdd(name: string): void {
    this.checkName(name, 'role');
    if (name === '') throw new AuthError('ERR_AUTH_ROLE_EMPTY');
    if (this.state.roles.has(name)) throw new AuthError('ERR_AUTH_ROLE_ALREADY_EXIST', { role: name });
    if (this.state.roles.size >= this.limits.maxRoles) throw limitError('maxRoles', { role: name });
    this.state.roles.set(name, { name, permissions: [] });
    // A virtual `root` holder gains nothing: the new role object has no permissions yet.
    this.bump();
  }

  /** Deletes a role and strips it from every user (one bump). While auth is on, `root` is refused. */
  roleDelete(name: string): void {
    if (this.state.enabled && name === ROOT_ROLE) throw new AuthError('ERR_AUTH_INVALID_MGMT', { role: name });
    const role = this.requireRole(name);
    for (const userName of this.state.holders.get(name) ?? []) {
      const user = this.state.users.get(userName)!;
      user.roles.splice(searchSortedNames(user.roles, name), 1);
      user.access.removeAll(role.permissions);
    }
    this.state.holders.delete(name);
    this.state.roles.delete(name);
    this.bump();
  }

  /**
   * The role's permissions sorted by key. For `root` (if such a role object exists) the stored list
   * is ignored and one READWRITE permission over every key is returned, as etcd 3.6+ does.
   */
  roleGet(name: string): Permission[] {
    const role = this.requireRole(name);
    if (name === ROOT_ROLE) return [copyPermission(ROOT_ROLE_PERMISSION)];
    return role.permissions.map(copyPermission);
  }

  /** Every role object's name, sorted (a virtual `root` never created is not listed). */
  roleList(): string[] {
    return [...this.state.roles.keys()].sort(compareNames);
  }

  /**
   * Grants `permission` (null = etcd's missing `perm`). An existing permission with the same key and
   * range end only has its type replaced (and still bumps, even to the same type).
   */
  roleGrantPermission(name: string, permission: Permission | null): void {
    if (permission === null) throw new AuthError('ERR_AUTH_PERMISSION_NOT_GIVEN', { role: name });
    if (!isInt32(permission.permType)) throw new TypeError('permType must be an int32');
    if (!isValidPermissionRange(permission.key, permission.rangeEnd)) throw new AuthError('ERR_AUTH_INVALID_MGMT', { role: name });
    const role = this.requireRole(name);
    this.checkKeySize(permission.key, permission.rangeEnd, name);
    const granted = copyPermission(permission);
    const at = searchPermission(role.permissions, granted);
    const holders = this.state.holders.get(name) ?? new Set<string>();
    if (at >= 0) {
      const previous = role.permissions[at]!;
      role.permissions[at] = granted;
      for (const user of holders) this.replaceInAccess(user, previous, granted);
    } else {
      if (role.permissions.length >= this.limits.maxPermissionsPerRole) throw limitError('maxPermissionsPerRole', { role: name });
      role.permissions.splice(-(at + 1), 0, granted);
      for (const user of holders) this.state.users.get(user)!.access.addPermission(granted);
    }
    this.bump();
  }

  /** Revokes the permission with exactly this key and range end (any type). */
  roleRevokePermission(name: string, key: Uint8Array, rangeEnd: Uint8Array): void {
    const role = this.requireRole(name);
    const at = searchPermission(role.permissions, { permType: 0, key, rangeEnd });
    if (at < 0) throw new AuthError('ERR_AUTH_PERMISSION_NOT_GRANTED', { role: name });
    const [removed] = role.permissions.splice(at, 1);
    for (const user of this.state.holders.get(name) ?? []) this.state.users.get(user)!.access.removePermission(removed!);
    this.bump();
  }

  // ---- checks ------------------------------------------------------------------------------

  /**
   * etcd's `IsAdminPermitted`: null when auth is off or the user holds `root`; otherwise
   * USER_EMPTY (no user), USER_NOT_FOUND or PERMISSION_DENIED. Ignores the auth revision.
   */
  isAdminPermitted(username: string): AuthErrorCode | null {
    if (!this.state.enabled) return null;
    if (username === '') return 'ERR_AUTH_USER_EMPTY';
    const user = this.state.users.get(username);
    if (user === undefined) return 'ERR_AUTH_USER_NOT_FOUND';
    return hasRoleName(user, ROOT_ROLE) ? null : 'ERR_AUTH_PERMISSION_DENIED';
  }

  /**
   * etcd's `isOpPermitted`: may `identity` read/write `[key, rangeEnd)` (rangeEnd empty: the key
   * alone; 0x00: to the end)? Off → allowed; revision 0 → USER_EMPTY; revision older than the
   * store's → OLD_REVISION; unknown user → PERMISSION_DENIED; root → allowed; then the ranges.
   */
  checkAccess(identity: AuthIdentity, access: Access, key: Uint8Array, rangeEnd: Uint8Array): AuthErrorCode | null {
    if (!this.state.enabled) return null;
    if (identity.authRevision === 0) return 'ERR_AUTH_USER_EMPTY';
    if (identity.authRevision < this.state.revision) return 'ERR_AUTH_OLD_REVISION';
    const user = this.state.users.get(identity.username);
    if (user === undefined) return 'ERR_AUTH_PERMISSION_DENIED';
    if (hasRoleName(user, ROOT_ROLE)) return null;
    return user.access.permits(access, key, rangeEnd) ? null : 'ERR_AUTH_PERMISSION_DENIED';
  }

  /** True when the user exists and holds `role` (etcd's `HasRole`). */
  hasRole(username: string, role: string): boolean {
    const user = this.state.users.get(username);
    return user !== undefined && hasRoleName(user, role);
  }

  /** UserGet's rule: admins may read anyone; others only themselves (else the admin-gate error). */
  checkUserGet(username: string, name: string): AuthErrorCode | null {
    const admin = this.isAdminPermitted(username);
    return admin !== null && name !== username ? admin : null;
  }

  /** RoleGet's rule: admins may read any role; others only roles they hold. */
  checkRoleGet(username: string, role: string): AuthErrorCode | null {
    const admin = this.isAdminPermitted(username);
    return admin !== null && !this.hasRole(username, role) ? admin : null;
  }

  // ---- authentication support ------------------------------------------------------------

  /**
   * The API-side half of Authenticate (etcd's CheckPassword before bcrypt): the stored hash and the
   * revision it was read at. NOT_ENABLED, FAILED (unknown user) or NO_PASSWORD_USER otherwise.
   */
  passwordCheckInput(name: string): { passwordHash: Uint8Array; authRevision: number } {
    if (!this.state.enabled) throw new AuthError('ERR_AUTH_NOT_ENABLED');
    const user = this.state.users.get(name);
    if (user === undefined) throw new AuthError('ERR_AUTH_FAILED');
    if (user.noPassword) throw new AuthError('ERR_AUTH_NO_PASSWORD_USER', { user: name });
    return { passwordHash: new Uint8Array(user.passwordHash), authRevision: this.state.revision };
  }

  /** The apply-side half of Authenticate: may a token be issued to `name` now? Returns the revision. */
  authenticate(name: string): number {
    if (!this.state.enabled) throw new AuthError('ERR_AUTH_NOT_ENABLED');
    const user = this.state.users.get(name);
    if (user === undefined || user.noPassword) throw new AuthError('ERR_AUTH_FAILED');
    return this.state.revision;
  }

  // ---- snapshot ----------------------------------------------------------------------------

  /** The whole store in its canonical binary form (see auth-snapshot.ts). */
  snapshot(): Uint8Array {
    return encodeAuthSnapshot(this.state);
  }

  /** SHA-256 of {@link snapshot}: equal on every replica that applied the same operations. */
  stateHash(): Uint8Array {
    return sha256(this.snapshot());
  }

  /** Asserts the derived indexes agree with users and roles (tests and fuzzing call this). */
  checkInvariants(): void {
    for (const user of this.state.users.values()) {
      user.access.read.full.checkInvariants();
      user.access.write.full.checkInvariants();
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  private bump(): void {
    this.state.revision++;
  }

  private requireUser(name: string): UserState {
    const user = this.state.users.get(name);
    if (user === undefined) throw new AuthError('ERR_AUTH_USER_NOT_FOUND', { user: name });
    return user;
  }

  private requireRole(name: string): RoleState {
    const role = this.state.roles.get(name);
    if (role === undefined) throw new AuthError('ERR_AUTH_ROLE_NOT_FOUND', { role: name });
    return role;
  }

  private replaceInAccess(userName: string, previous: Permission, granted: Permission): void {
    const access = this.state.users.get(userName)!.access;
    access.removePermission(previous);
    access.addPermission(granted);
  }

  /** A name the store may keep: well-formed text (a caller bug otherwise), at most maxNameBytes. */
  private checkName(name: string, kind: 'user' | 'role'): void {
    if (typeof name !== 'string' || !isWellFormedText(name)) throw new TypeError('a name is a well-formed string');
    if (utf8ByteLength(name) > this.limits.maxNameBytes) {
      throw new AuthError(kind === 'user' ? 'ERR_AUTH_USER_NAME_TOO_LONG' : 'ERR_AUTH_ROLE_NAME_TOO_LONG', { limit: 'maxNameBytes' });
    }
  }

  private checkHashSize(hash: Uint8Array): void {
    if (hash.length > this.limits.maxPasswordHashBytes) throw limitError('maxPasswordHashBytes', {});
  }

  private checkKeySize(key: Uint8Array, rangeEnd: Uint8Array, role: string): void {
    if (key.length > this.limits.maxKeyBytes || rangeEnd.length > this.limits.maxKeyBytes) {
      throw limitError('maxKeyBytes', { role });
    }
  }

  private rebuildDerivedState(): void {
    for (const user of this.state.users.values()) {
      for (const role of user.roles) {
        addHolder(this.state, role, user.name);
        const roleState = this.state.roles.get(role);
        if (roleState !== undefined) user.access.addAll(roleState.permissions);
      }
    }
  }
}

function hasRoleName(user: UserState, role: string): boolean {
  return searchSortedNames(user.roles, role) >= 0;
}

function limitError(limit: keyof AuthLimits, context: { user?: string; role?: string }): AuthError {
  return new AuthError('ERR_AUTH_LIMIT_EXCEEDED', { ...context, limit });
}

/** Index of the permission with the same (key, rangeEnd), or the negative insertion point minus one. */
function searchPermission(sorted: readonly Permission[], target: Permission): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = comparePermissionRanges(sorted[middle]!, target);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -(low + 1);
}
