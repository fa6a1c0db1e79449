/**
 * `ValidateAttribute`: the `when` keys istiod knows and the checks it applies to their values.
 * Some known keys are deliberately unchecked, as in istiod (for example `source.namespace`).
 */
import type { WebhookCode } from '../diagnostics/codes';
import { checkEmptyValues, checkServiceAccount, checkWildcardValues, validateIps, validatePorts } from './security-values';
import type { ValueIssue } from './security-values';

/** Renders several errors the way Go's multierror does when formatted with `%v`. */
function multiErrorText(issues: readonly ValueIssue[]): string {
  if (issues.length === 1) return `1 error occurred:\n\t* ${issues[0]?.message ?? ''}\n\n`;
  return `${issues.length} errors occurred:\n\t${issues.map((found) => `* ${found.message}`).join('\n\t')}\n\n`;
}

/** The issue of a check that returns a Go multierror (IPs, ports), as one wrapped issue. */
function asMultiError(issues: ValueIssue[]): ValueIssue[] {
  const first = issues[0];
  if (first === undefined) return [];
  return [{ code: first.code, message: multiErrorText(issues), ...(first.index === undefined ? {} : { index: first.index }) }];
}

function mapKeyIssue(key: string): ValueIssue[] {
  const open = key.indexOf('[');
  if (key.endsWith(']') && open > 0 && open < key.length - 2) return [];
  return [{ code: 'AP_CONDITION_BAD_KEY', message: `bad key (${key}): should have format a[b]` }];
}

function rejected(code: WebhookCode, message: string): ValueIssue[] {
  return [{ code, message }];
}

/** The attribute families, in istiod's order of matching. */
type AttributeCheck = (key: string, values: readonly string[]) => ValueIssue[];

const EXACT_CHECKS: ReadonlyMap<string, AttributeCheck> = new Map<string, AttributeCheck>([
  ['source.ip', (_key, values) => asMultiError(validateIps(values))],
  ['remote.ip', (_key, values) => asMultiError(validateIps(values))],
  ['source.namespace', () => []],
  ['source.serviceAccount', (key, values) => checkServiceAccount(key, values)],
  ['source.principal', () => []],
  ['source.trustDomain', (key, values) => checkWildcardValues(key, values)],
  ['request.auth.principal', () => []],
  ['request.auth.audiences', () => []],
  ['request.auth.presenter', () => []],
  ['destination.ip', (_key, values) => asMultiError(validateIps(values))],
  ['destination.port', (_key, values) => asMultiError(validatePorts(values))],
  ['connection.sni', () => []],
  ['destination.namespace', (key) => rejected('AP_CONDITION_ATTRIBUTE_REPLACED', `attribute ${key} is replaced by the metadata.namespace`)],
  ['destination.name', (key) => rejected('AP_CONDITION_ATTRIBUTE_DEPRECATED', `deprecated attribute ${key}: only supported in v1alpha1`)],
  ['destination.user', (key) => rejected('AP_CONDITION_ATTRIBUTE_DEPRECATED', `deprecated attribute ${key}: only supported in v1alpha1`)],
]);

/**
 * Checks `values` (or `notValues`) of the `when` condition `key`. The first issue is the error
 * istiod reports (wrapped by the caller as ``invalid `value` for `key` <key>: ...``).
 */
export function validateAttribute(key: string, values: readonly string[]): ValueIssue[] {
  const empty = checkEmptyValues(key, values);
  if (empty.length > 0) return empty;
  if (key.startsWith('request.headers')) return mapKeyIssue(key);
  const exact = EXACT_CHECKS.get(key);
  if (exact !== undefined && !key.startsWith('request.auth.claims')) return exact(key, values);
  if (key.startsWith('request.auth.claims')) return mapKeyIssue(key);
  if (key.startsWith('experimental.envoy.filters.')) return mapKeyIssue(key);
  if (key.startsWith('destination.labels')) return rejected('AP_CONDITION_ATTRIBUTE_REPLACED', `attribute ${key} is replaced by the workload selector`);
  return rejected('AP_CONDITION_UNKNOWN_ATTRIBUTE', `unknown attribute: ${key}`);
}
