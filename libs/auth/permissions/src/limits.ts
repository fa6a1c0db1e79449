/**
 * Upper bounds on everything the auth store holds. Replicas must share one configuration: a limit
 * decides whether an operation succeeds, so it is part of the replicated state machine's rules.
 */
export interface AuthLimits {
  /** Users in the store. */
  readonly maxUsers: number;
  /** Role objects in the store. */
  readonly maxRoles: number;
  /** Roles granted to one user. */
  readonly maxRolesPerUser: number;
  /** Key permissions held by one role. */
  readonly maxPermissionsPerRole: number;
  /** UTF-8 bytes of a user or role name. */
  readonly maxNameBytes: number;
  /** Bytes of a permission's key or range end (etcd's default request limit is 1.5 MiB). */
  readonly maxKeyBytes: number;
  /** Bytes of a stored password hash (a bcrypt hash is 60). */
  readonly maxPasswordHashBytes: number;
}

export const DEFAULT_AUTH_LIMITS: AuthLimits = Object.freeze({
  maxUsers: 1_000_000,
  maxRoles: 1_000_000,
  maxRolesPerUser: 10_000,
  maxPermissionsPerRole: 1_000_000,
  maxNameBytes: 64 * 1024,
  maxKeyBytes: 1536 * 1024,
  maxPasswordHashBytes: 1024,
});

/** Defaults overridden by `overrides`; every value must be a positive safe integer. */
export function resolveAuthLimits(overrides: Partial<AuthLimits> = {}): AuthLimits {
  const limits = { ...DEFAULT_AUTH_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`auth limit ${name} must be a positive integer`);
  }
  return Object.freeze(limits);
}

/** Bytes of `text` in UTF-8 (text is well-formed: lone surrogates were rejected before). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
