// The inbound HTTP connection manager normalizes paths before filters run (normalize_path: true,
// merge_slashes false, escaped slashes kept): backslashes become `/`, `.`/`..` segments are
// resolved, percent-encoded unreserved characters are decoded. RBAC url_path matchers then see
// the path without query and fragment.

const UNRESERVED = /^[A-Za-z0-9\-._~]$/u;

function decodeUnreserved(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/gu, (_whole, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split('/');
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '.') {
      if (last) out.push('');
    } else if (segment === '..') {
      if (out.length > 1) out.pop();
      if (last) out.push('');
    } else {
      out.push(segment);
    }
  });
  const joined = out.join('/');
  return joined.startsWith('/') ? joined : `/${joined}`;
}

/** Nothing to normalize: no escape, no backslash, no dot segment (one would follow a `/`). */
const PLAIN_PATH = /^\/[^%\\?#]*(?:[?#].*)?$/su;

/** `:path` as Envoy's HCM hands it to filters. */
export function normalizeRequestPath(rawPath: string): string {
  if (PLAIN_PATH.test(rawPath) && !pathWithoutQuery(rawPath).includes('/.')) return rawPath;
  return normalizePathFully(rawPath);
}

/** The full normalization, without the shortcut for paths that need none. */
export function normalizePathFully(rawPath: string): string {
  const cut = rawPath.search(/[?#]/u);
  const path = cut < 0 ? rawPath : rawPath.slice(0, cut);
  const rest = cut < 0 ? '' : rawPath.slice(cut);
  return removeDotSegments(decodeUnreserved(path.replaceAll('\\', '/'))) + rest;
}

/** The part of `:path` url_path matchers test: no query string, no fragment. */
export function pathWithoutQuery(path: string): string {
  const cut = path.search(/[?#]/u);
  return cut < 0 ? path : path.slice(0, cut);
}
