import type { Permission } from './permission';
import { UserAccess } from './user-access';

/** The reserved names: the `root` user and the virtual `root` role (etcd's rootUser/rootRole). */
export const ROOT_USER = 'root';
export const ROOT_ROLE = 'root';

export interface UserState {
  readonly name: string;
  /** The bcrypt hash bytes as given; empty for no-password users. */
  passwordHash: Uint8Array;
  readonly noPassword: boolean;
  /** Sorted ascending in UTF-8 byte order, no duplicates. */
  readonly roles: string[];
  /** Merged READ/WRITE ranges over `roles`, kept current on every change. */
  readonly access: UserAccess;
}

export interface RoleState {
  readonly name: string;
  /** Sorted by (key, rangeEnd), no two with the same (key, rangeEnd). */
  readonly permissions: Permission[];
}

/** Everything the auth store holds; `holders` is derived (role name → users holding it). */
export interface AuthState {
  enabled: boolean;
  revision: number;
  readonly users: Map<string, UserState>;
  readonly roles: Map<string, RoleState>;
  readonly holders: Map<string, Set<string>>;
}

export function emptyAuthState(): AuthState {
  return { enabled: false, revision: 0, users: new Map(), roles: new Map(), holders: new Map() };
}

export function newUserState(name: string, passwordHash: Uint8Array, noPassword: boolean): UserState {
  return { name, passwordHash, noPassword, roles: [], access: new UserAccess() };
}

export function addHolder(state: AuthState, role: string, user: string): void {
  let users = state.holders.get(role);
  if (users === undefined) {
    users = new Set();
    state.holders.set(role, users);
  }
  users.add(user);
}

export function removeHolder(state: AuthState, role: string, user: string): void {
  const users = state.holders.get(role);
  if (users === undefined) return;
  users.delete(user);
  if (users.size === 0) state.holders.delete(role);
}
