// etcd's `--auth-token` flag: `simple`, or `jwt,sign-method=RS256,priv-key=<path>,pub-key=<path>,ttl=5m`
// (server/auth/store.go decomposeOpts, server/auth/options.go). Parsed here without touching files.
import { TokenError } from './errors';
import { parseGoDurationMs } from './go-duration';
import { DEFAULT_JWT_TTL_MS } from './jwt-options';
import { isJwtSignMethod, keyRequirementOf, type JwtSignMethod } from './sign-method';
import type { JwtKeyConfig } from './key-material';

export type AuthTokenOption =
  | { readonly type: 'simple'; readonly unknownOptions: readonly string[] }
  /** etcd's "nop" provider (type ""): every Authenticate fails with ErrAuthFailed. */
  | { readonly type: 'none'; readonly unknownOptions: readonly string[] }
  | {
      readonly type: 'jwt';
      readonly signMethod: JwtSignMethod;
      readonly privateKeyPath: string | undefined;
      readonly publicKeyPath: string | undefined;
      readonly ttlMs: number;
      /** Option names etcd would only warn about; the caller logs them. */
      readonly unknownOptions: readonly string[];
    };

const KNOWN_JWT_OPTIONS = ['sign-method', 'priv-key', 'pub-key', 'ttl'];
const MAX_OPTION_CHARS = 4096;

function invalid(detail: string): TokenError {
  return new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail });
}

/** Splits `name=value` pairs as etcd's decomposeOpts does: exactly one `=`, no duplicate names. */
function decomposeOptions(parts: readonly string[]): Map<string, string> {
  const options = new Map<string, string>();
  for (const part of parts) {
    const pair = part.split('=');
    if (pair.length !== 2) throw invalid('each option must be name=value');
    const [name, value] = pair as [string, string];
    if (options.has(name)) throw invalid(`duplicate option ${name}`);
    options.set(name, value);
  }
  return options;
}

/** Parses the flag. @throws TokenError OPTIONS_INVALID or METHOD_INVALID, as etcd refuses to start. */
export function parseAuthTokenOption(flag: string): AuthTokenOption {
  if (flag.length > MAX_OPTION_CHARS) throw invalid('option string too long');
  const [type, ...rest] = flag.split(',');
  const options = decomposeOptions(rest);
  const unknownOptions = [...options.keys()].filter((name) => !KNOWN_JWT_OPTIONS.includes(name));
  if (type === 'simple') return { type: 'simple', unknownOptions: [...options.keys()] };
  if (type === '') return { type: 'none', unknownOptions: [...options.keys()] };
  if (type !== 'jwt') throw invalid('unknown token type');
  const method = options.get('sign-method') ?? '';
  if (!isJwtSignMethod(method)) throw new TokenError('ERR_AUTH_TOKEN_METHOD_INVALID', { detail: 'unknown or missing sign-method' });
  let ttlMs = DEFAULT_JWT_TTL_MS;
  const ttl = options.get('ttl');
  if (ttl !== undefined && ttl !== '') {
    const parsed = parseGoDurationMs(ttl);
    // etcd accepts any duration; ward refuses what would issue already-expired tokens.
    if (parsed === undefined || parsed < 1000) throw invalid('ttl must be a Go duration of at least 1s');
    ttlMs = Math.floor(parsed);
  }
  const path = (name: string): string | undefined => (options.get(name) ? options.get(name) : undefined);
  return { type: 'jwt', signMethod: method, privateKeyPath: path('priv-key'), publicKeyPath: path('pub-key'), ttlMs, unknownOptions };
}

/**
 * The key configuration etcd builds from the flag's files: for HMAC methods the raw bytes of
 * `priv-key` are the secret (and `pub-key` is ignored); otherwise both files are PEM text.
 */
export async function jwtKeyConfigFromOption(
  option: Extract<AuthTokenOption, { type: 'jwt' }>,
  readFile: (path: string) => Promise<Uint8Array>,
): Promise<JwtKeyConfig> {
  const text = async (path: string | undefined): Promise<string | undefined> =>
    path === undefined ? undefined : Buffer.from(await readFile(path)).toString('utf8');
  if (keyRequirementOf(option.signMethod).family === 'hmac') {
    return { signMethod: option.signMethod, secret: option.privateKeyPath === undefined ? undefined : await readFile(option.privateKeyPath) };
  }
  return { signMethod: option.signMethod, privateKeyPem: await text(option.privateKeyPath), publicKeyPem: await text(option.publicKeyPath) };
}
