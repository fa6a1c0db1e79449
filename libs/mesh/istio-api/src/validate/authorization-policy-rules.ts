/** `ValidateAuthorizationPolicy`, rule part: sources, operations and conditions, in istiod's order. */
import type { Condition, Operation, Rule, Source } from '../model/authorization-policy';
import { validateAttribute } from './condition-attributes';
import type { Findings } from './findings';
import {
  checkEmptyValues,
  checkServiceAccount,
  checkTrustDomainValues,
  checkValidPathTemplate,
  validateIps,
  validatePorts,
} from './security-values';
import type { ValueIssue } from './security-values';

type SourceField = keyof Source;
type OperationField = keyof Operation;

/** Go field name used in messages → JSON field name and the check istiod applies, in istiod's order. */
const SOURCE_VALUE_CHECKS: readonly [string, SourceField, (key: string, values: readonly string[]) => ValueIssue[]][] = [
  ['Principals', 'principals', checkEmptyValues],
  ['RequestPrincipals', 'requestPrincipals', checkEmptyValues],
  ['Namespaces', 'namespaces', checkEmptyValues],
  ['ServiceAccounts', 'serviceAccounts', checkServiceAccount],
  ['TrustDomains', 'trustDomains', checkTrustDomainValues],
  ['IpBlocks', 'ipBlocks', checkEmptyValues],
  ['RemoteIpBlocks', 'remoteIpBlocks', checkEmptyValues],
  ['NotPrincipals', 'notPrincipals', checkEmptyValues],
  ['NotRequestPrincipals', 'notRequestPrincipals', checkEmptyValues],
  ['NotNamespaces', 'notNamespaces', checkEmptyValues],
  ['NotServiceAccounts', 'notServiceAccounts', checkServiceAccount],
  ['NotTrustDomains', 'notTrustDomains', checkTrustDomainValues],
  ['NotIpBlocks', 'notIpBlocks', checkEmptyValues],
  ['NotRemoteIpBlocks', 'notRemoteIpBlocks', checkEmptyValues],
];

const SOURCE_IP_FIELDS: readonly SourceField[] = ['ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks'];

/** Source fields that make a DENY rule match on TCP (trustDomains is not among them in istiod). */
const SOURCE_TCP_FIELDS: readonly SourceField[] = [
  'notPrincipals', 'principals', 'ipBlocks', 'notIpBlocks', 'namespaces', 'notNamespaces',
  'remoteIpBlocks', 'notRemoteIpBlocks', 'serviceAccounts', 'notServiceAccounts',
];

const OPERATION_EMPTY_CHECKS: readonly [string, OperationField][] = [
  ['Ports', 'ports'], ['Methods', 'methods'], ['Paths', 'paths'], ['Hosts', 'hosts'],
  ['NotPorts', 'notPorts'], ['NotMethods', 'notMethods'], ['NotPaths', 'notPaths'], ['NotHosts', 'notHosts'],
];

function report(findings: Findings, issues: readonly ValueIssue[], fieldPath: string): void {
  for (const found of issues) findings.error(found.code, found.message, found.index === undefined ? fieldPath : `${fieldPath}[${found.index}]`);
}

function count(values: readonly string[] | undefined): number {
  return values?.length ?? 0;
}

/** Validates one `from[].source`; returns whether it uses a TCP-compatible field. */
function validateSource(source: Source, ruleIndex: number, path: string, findings: Findings): boolean {
  const identity = count(source.principals) + count(source.notPrincipals) + count(source.namespaces) + count(source.notNamespaces);
  if (identity > 0 && count(source.serviceAccounts) + count(source.notServiceAccounts) > 0) {
    findings.error('AP_SERVICE_ACCOUNTS_WITH_NAMESPACES_OR_PRINCIPALS', `cannot set serviceAccounts with namespaces or principals, found at rule ${ruleIndex}`, `${path}.serviceAccounts`);
  }
  if (Object.values(source).every((values) => count(values as readonly string[] | undefined) === 0)) {
    findings.error('AP_FROM_SOURCE_EMPTY', `\`from.source\` must not be empty, found at rule ${ruleIndex}`, path);
  }
  for (const field of SOURCE_IP_FIELDS) report(findings, validateIps(source[field] ?? []), `${path}.${field}`);
  for (const [goName, field, check] of SOURCE_VALUE_CHECKS) report(findings, check(goName, source[field] ?? []), `${path}.${field}`);
  return SOURCE_TCP_FIELDS.some((field) => source[field] !== undefined);
}

/** Validates one `to[].operation`; returns whether it sets ports or notPorts. */
function validateOperation(operation: Operation, ruleIndex: number, path: string, findings: Findings): boolean {
  if (Object.values(operation).every((values) => count(values as readonly string[] | undefined) === 0)) {
    findings.error('AP_TO_OPERATION_EMPTY', `\`to.operation\` must not be empty, found at rule ${ruleIndex}`, path);
  }
  report(findings, validatePorts(operation.ports ?? []), `${path}.ports`);
  report(findings, validatePorts(operation.notPorts ?? []), `${path}.notPorts`);
  for (const [goName, field] of OPERATION_EMPTY_CHECKS) report(findings, checkEmptyValues(goName, operation[field] ?? []), `${path}.${field}`);
  report(findings, checkValidPathTemplate('Paths', operation.paths ?? []), `${path}.paths`);
  report(findings, checkValidPathTemplate('NotPaths', operation.notPaths ?? []), `${path}.notPaths`);
  return operation.ports !== undefined || operation.notPorts !== undefined;
}

function validateCondition(condition: Condition, path: string, findings: Findings): void {
  const key = condition.key;
  if (key === '') {
    findings.error('AP_CONDITION_KEY_EMPTY', '`key` must not be empty', `${path}.key`);
    return;
  }
  if (count(condition.values) === 0 && count(condition.notValues) === 0) {
    findings.error('AP_CONDITION_NO_VALUES', `at least one of \`values\` or \`notValues\` must be set for key ${key}`, path);
    return;
  }
  const [valueIssue] = validateAttribute(key, condition.values ?? []);
  if (valueIssue !== undefined) {
    findings.error(valueIssue.code, `invalid \`value\` for \`key\` ${key}: ${valueIssue.message}`, valueIssue.index === undefined ? `${path}.key` : `${path}.values[${valueIssue.index}]`);
  }
  const [notValueIssue] = validateAttribute(key, condition.notValues ?? []);
  if (notValueIssue !== undefined) {
    findings.error(notValueIssue.code, `invalid \`notValue\` for \`key\` ${key}: ${notValueIssue.message}`, notValueIssue.index === undefined ? `${path}.key` : `${path}.notValues[${notValueIssue.index}]`);
  }
}

const DENY_HTTP_ONLY_WARNING =
  'configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port';

/** Validates rule `ruleIndex`; for a DENY policy, warns when the rule only uses HTTP attributes. */
export function validateRule(rule: Rule, ruleIndex: number, isDeny: boolean, findings: Findings): void {
  const path = `spec.rules[${ruleIndex}]`;
  let tcpInFrom = false;
  let fromExists = false;
  (rule.from ?? []).forEach((from, fromIndex) => {
    const fromPath = `${path}.from[${fromIndex}]`;
    if (from.source === undefined) {
      findings.error('AP_FROM_SOURCE_NIL', `\`from.source\` must not be nil, found at rule ${ruleIndex}`, fromPath);
      return;
    }
    fromExists = true;
    if (validateSource(from.source, ruleIndex, `${fromPath}.source`, findings)) tcpInFrom = true;
  });
  let tcpInTo = false;
  let toExists = false;
  (rule.to ?? []).forEach((to, toIndex) => {
    const toPath = `${path}.to[${toIndex}]`;
    if (to.operation === undefined) {
      findings.error('AP_TO_OPERATION_NIL', `\`to.operation\` must not be nil, found at rule ${ruleIndex}`, toPath);
      return;
    }
    toExists = true;
    if (validateOperation(to.operation, ruleIndex, `${toPath}.operation`, findings)) tcpInTo = true;
  });
  (rule.when ?? []).forEach((condition, whenIndex) => validateCondition(condition, `${path}.when[${whenIndex}]`, findings));
  if (isDeny && ((fromExists && !toExists && !tcpInFrom) || (toExists && !tcpInTo))) {
    findings.warning('AP_DENY_HTTP_ONLY', DENY_HTTP_ONLY_WARNING, path);
  }
}
