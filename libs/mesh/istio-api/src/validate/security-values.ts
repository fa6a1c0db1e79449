/**
 * istiod's value checks for AuthorizationPolicy fields (`pkg/config/security`), with its exact
 * message texts. Each check returns the issues in istiod's order; `index` names the offending
 * value so a diagnostic can point at it.
 */
import type { WebhookCode } from '../diagnostics/codes';
import { utf8ByteLength } from '../load/limits';
import { parseIpAddress, parseIpPrefix } from './go-netip';
import { goQuote } from './go-quote';

export interface ValueIssue {
  readonly code: WebhookCode;
  readonly message: string;
  /** Index of the offending value, when one value is at fault. */
  readonly index?: number;
}

const MAX_SERVICE_ACCOUNTS = 16;
const MAX_SERVICE_ACCOUNT_CHARS = 320;
const UINT32_MAX = 4_294_967_295;
const VALID_PATH_LITERAL = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/;

function issue(code: WebhookCode, message: string, index?: number): ValueIssue {
  return index === undefined ? { code, message } : { code, message, index };
}

/** `ValidateIPs`: every value must be an address or a CIDR (all bad values are reported). */
export function validateIps(values: readonly string[]): ValueIssue[] {
  const issues: ValueIssue[] = [];
  values.forEach((value, index) => {
    if (value.includes('/')) {
      const prefix = parseIpPrefix(value);
      if (!prefix.ok) issues.push(issue('AP_BAD_CIDR', `bad CIDR range (${value}): ${prefix.error}`, index));
    } else if (!parseIpAddress(value).ok) {
      issues.push(issue('AP_BAD_IP', `bad IP address (${value})`, index));
    }
  });
  return issues;
}

/** `ValidatePorts`: Go's `strconv.ParseUint(port, 10, 32)` and at most 65535 (all bad values are reported). */
export function validatePorts(values: readonly string[]): ValueIssue[] {
  const issues: ValueIssue[] = [];
  values.forEach((value, index) => {
    let parseError = '<nil>';
    if (!/^[0-9]+$/.test(value)) parseError = `strconv.ParseUint: parsing ${goQuote(value)}: invalid syntax`;
    else if (Number(value) > UINT32_MAX) parseError = `strconv.ParseUint: parsing ${goQuote(value)}: value out of range`;
    else if (Number(value) <= 65535) return;
    issues.push(issue('AP_BAD_PORT', `bad port (${value}): ${parseError}`, index));
  });
  return issues;
}

/** `CheckEmptyValues`: the first empty value. */
export function checkEmptyValues(key: string, values: readonly string[]): ValueIssue[] {
  const index = values.indexOf('');
  return index === -1 ? [] : [issue('AP_EMPTY_VALUE', `empty value not allowed, found in ${key}`, index)];
}

/** `CheckWildcardValues`: non-empty, and at most one `*`, only at the start or the end. */
export function checkWildcardValues(key: string, values: readonly string[]): ValueIssue[] {
  const empty = checkEmptyValues(key, values);
  if (empty.length > 0) return empty;
  for (const [index, value] of values.entries()) {
    const count = value.split('*').length - 1;
    if (count > 1) return [issue('AP_MULTIPLE_WILDCARDS', `at most one wildcard is allowed, found in ${key}: ${goQuote(value)}`, index)];
    if (count === 1 && value !== '*' && !value.startsWith('*') && !value.endsWith('*')) {
      return [issue('AP_WILDCARD_IN_MIDDLE', `wildcard is only allowed at the start or end, found in ${key}: ${goQuote(value)}`, index)];
    }
  }
  return [];
}

/** `CheckTrustDomainValues`: wildcard rules plus no `/`. */
export function checkTrustDomainValues(key: string, values: readonly string[]): ValueIssue[] {
  const wildcard = checkWildcardValues(key, values);
  if (wildcard.length > 0) return wildcard;
  const index = values.findIndex((value) => value.includes('/'));
  return index === -1 ? [] : [issue('AP_TRUST_DOMAIN_SLASH', `trust domain must not contain '/', found in ${key}: ${goQuote(values[index] ?? '')}`, index)];
}

function checkOneServiceAccount(key: string, value: string, index: number): ValueIssue | undefined {
  const format = "expected format 'serviceAccount' or 'namespace/serviceAccount'";
  if (value === '') return issue('AP_EMPTY_VALUE', `empty value not allowed, found in ${key}`, index);
  if (value.includes('*')) return issue('AP_SERVICE_ACCOUNT_WILDCARD', `wildcard not allowed, found in ${key}`, index);
  const slashes = value.split('/').length - 1;
  if (slashes > 1) return issue('AP_SERVICE_ACCOUNT_FORMAT', `${format}, found ${goQuote(value)} in ${key}`, index);
  if (utf8ByteLength(value) > MAX_SERVICE_ACCOUNT_CHARS) {
    return issue('AP_SERVICE_ACCOUNT_TOO_LONG', `value cannot exceed ${MAX_SERVICE_ACCOUNT_CHARS} characters, found ${goQuote(value)} in ${key}`, index);
  }
  if (slashes === 1) {
    const [namespace, name] = value.split('/') as [string, string];
    if (namespace === '') return issue('AP_SERVICE_ACCOUNT_EMPTY_NAMESPACE', `${format}, found empty namespace ${goQuote(value)} in ${key}`, index);
    if (name === '') return issue('AP_SERVICE_ACCOUNT_EMPTY_NAME', `${format}, found empty serviceAccount ${goQuote(value)} in ${key}`, index);
  }
  return undefined;
}

/** `CheckServiceAccount`: at most 16 values, each `sa` or `ns/sa`, no wildcard, at most 320 characters. */
export function checkServiceAccount(key: string, values: readonly string[]): ValueIssue[] {
  if (values.length > MAX_SERVICE_ACCOUNTS) return [issue('AP_TOO_MANY_SERVICE_ACCOUNTS', `may not have more than ${MAX_SERVICE_ACCOUNTS} values`)];
  for (const [index, value] of values.entries()) {
    const found = checkOneServiceAccount(key, value, index);
    if (found !== undefined) return [found];
  }
  return [];
}

function checkPathTemplate(key: string, original: string, index: number): ValueIssue | undefined {
  const hasTemplate = original.includes('{*}') || original.includes('{**}');
  const path = original.replace(/^\/+/, '').replace(/\/+$/, '');
  let sawMatchAny = false;
  for (const segment of path.split('/')) {
    const isOperator = segment === '{*}' || segment === '{**}';
    if (isOperator && sawMatchAny) {
      return issue('AP_PATH_TEMPLATE_ANY_NOT_LAST', `invalid or unsupported path ${path}, found in ${key}. {**} is not the last operator`, index);
    }
    if (isOperator) {
      sawMatchAny = segment === '{**}';
      continue;
    }
    if (/[{}]/.test(segment)) {
      return issue('AP_PATH_TEMPLATE_BRACES', `invalid or unsupported path ${path}, found in ${key}. Contains '{' or '}' beyond a supported path template`, index);
    }
    if (hasTemplate && !VALID_PATH_LITERAL.test(segment)) {
      return issue('AP_PATH_TEMPLATE_LITERAL', `invalid or unsupported path ${path}, found in ${key}. Contains segment ${segment} with invalid string literal`, index);
    }
  }
  return undefined;
}

/** `CheckValidPathTemplate`: `{*}` / `{**}` only as whole segments, `{**}` last, literals valid pchars. */
export function checkValidPathTemplate(key: string, paths: readonly string[]): ValueIssue[] {
  for (const [index, path] of paths.entries()) {
    const found = checkPathTemplate(key, path, index);
    if (found !== undefined) return [found];
  }
  return [];
}
