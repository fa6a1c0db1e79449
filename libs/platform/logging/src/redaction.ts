// The central redaction list: no password, hash, token, authorization header or private key
// reaches a log line, at any depth, under any capitalisation, or as a recognisable string.

/** Field names whose values are always replaced (compared case-insensitively, `_`/`-` ignored). */
export const REDACTED_FIELDS: readonly string[] = Object.freeze([
  'password',
  'hashedPassword',
  'passwordHash',
  'token',
  'simpleToken',
  'accessToken',
  'refreshToken',
  'authorization',
  'cookie',
  'privateKey',
  'signingKey',
  'jwtSigningKey',
  'secret',
  'clientSecret',
]);

export const REDACTED = '[REDACTED]';

const normalize = (name: string): string => name.replace(/[_-]/g, '').toLowerCase();
const REDACTED_SET: ReadonlySet<string> = new Set(REDACTED_FIELDS.map(normalize));

/** Strings that are secrets whatever field they sit in. */
const SECRET_PATTERNS: readonly RegExp[] = [
  // PEM private keys (PKCS#1, PKCS#8, EC, encrypted).
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  // JWS compact serialisation (JWTs): header.payload.signature, base64url.
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  // bcrypt hashes.
  /\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}/g,
  // Bearer credentials.
  /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]+/g,
];

export function isRedactedField(name: string): boolean {
  return REDACTED_SET.has(normalize(name));
}

export function scrubString(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

const MAX_DEPTH = 8;
const MAX_ARRAY_ITEMS = 100;

/**
 * A copy of `value` with secret fields replaced and secret-looking strings scrubbed. Bounded:
 * deeper than MAX_DEPTH or longer arrays are cut, cycles are broken.
 */
export function scrub(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[depth limit]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ARRAY_ITEMS).map((item) => scrub(item, depth + 1, seen));
    if (value.length > MAX_ARRAY_ITEMS) items.push(`[${value.length - MAX_ARRAY_ITEMS} more]`);
    return items;
  }
  if (value instanceof Uint8Array) return `[${value.length} bytes]`;
  if (value instanceof Error) {
    return scrub({ type: value.name, message: value.message, stack: value.stack, code: (value as { code?: unknown }).code }, depth, seen);
  }
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = isRedactedField(key) ? REDACTED : scrub(field, depth + 1, seen);
  }
  return out;
}
