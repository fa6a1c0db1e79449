// One AuthorizationPolicy rule as the ordered attribute lists istiod builds from it (its `Model`):
// one principal list per `from` entry, one permission list per `to` entry, `when` conditions
// appended to every list of their side. Values are already rewritten for trust-domain aliases.
import type { Condition, Operation, Rule, Source } from '@ward/mesh/istio-api';
import { EXTENDED_KINDS, attributeOfConditionKey, type AttributeKind } from './attributes';
import { expandTrustDomainAliases, replaceTrustDomainAliases, type TrustDomainBundle } from './trust-domain';

/** One attribute test: its values (ORed) and its negated values. */
export interface AttributeEntry {
  readonly kind: AttributeKind;
  /** The key as istiod names it (the `when` key, or `:authority`, `:method`, ... for operations). */
  readonly key: string;
  readonly extended: boolean;
  readonly values: readonly string[];
  readonly notValues: readonly string[];
  /** Field paths of the values and the negated values, for diagnostics. */
  readonly valuesPath: string;
  readonly notValuesPath: string;
}

/** The model of one rule. */
export interface RuleModel {
  readonly permissions: ReadonlyArray<readonly AttributeEntry[]>;
  readonly principals: ReadonlyArray<readonly AttributeEntry[]>;
  /** Principals naming a trust domain outside the bundle (kept as written). */
  readonly foreignPrincipals: readonly string[];
}

/** A `when` key istiod does not know: istiod skips the whole rule. */
export interface UnknownAttribute {
  readonly unknownAttribute: string;
  readonly path: string;
}

function entry(
  kind: AttributeKind,
  key: string,
  values: readonly string[] | undefined,
  notValues: readonly string[] | undefined,
  path: string,
  notPath: string,
): AttributeEntry | undefined {
  if ((values?.length ?? 0) === 0 && (notValues?.length ?? 0) === 0) return undefined;
  return { kind, key, extended: EXTENDED_KINDS.has(kind), values: values ?? [], notValues: notValues ?? [], valuesPath: path, notValuesPath: notPath };
}

function field(kind: AttributeKind, key: string, base: string, name: string, values?: readonly string[], notValues?: readonly string[]): AttributeEntry | undefined {
  const notName = `not${name.charAt(0).toUpperCase()}${name.slice(1)}`;
  return entry(kind, key, values, notValues, `${base}.${name}`, `${base}.${notName}`);
}

function present(entries: ReadonlyArray<AttributeEntry | undefined>): AttributeEntry[] {
  return entries.filter((e): e is AttributeEntry => e !== undefined);
}

/** Source fields in istiod's and-list order: principals first, ipBlocks last. */
function sourceEntries(source: Source, base: string): AttributeEntry[] {
  return present([
    field('source.principal', 'source.principal', base, 'principals', source.principals, source.notPrincipals),
    field('request.auth.principal', 'request.auth.principal', base, 'requestPrincipals', source.requestPrincipals, source.notRequestPrincipals),
    field('source.serviceAccount', 'source.serviceAccount', base, 'serviceAccounts', source.serviceAccounts, source.notServiceAccounts),
    field('source.trustDomain', 'source.trustDomain', base, 'trustDomains', source.trustDomains, source.notTrustDomains),
    field('source.namespace', 'source.namespace', base, 'namespaces', source.namespaces, source.notNamespaces),
    field('remote.ip', 'remote.ip', base, 'remoteIpBlocks', source.remoteIpBlocks, source.notRemoteIpBlocks),
    field('source.ip', 'source.ip', base, 'ipBlocks', source.ipBlocks, source.notIpBlocks),
  ]);
}

/** Operation fields in istiod's and-list order: hosts, methods, paths, ports. */
function operationEntries(operation: Operation, base: string): AttributeEntry[] {
  return present([
    field('hosts', ':authority', base, 'hosts', operation.hosts, operation.notHosts),
    field('methods', ':method', base, 'methods', operation.methods, operation.notMethods),
    field('paths', 'path-matcher', base, 'paths', operation.paths, operation.notPaths),
    field('destination.port', 'destination.port', base, 'ports', operation.ports, operation.notPorts),
  ]);
}

function conditionEntries(conditions: readonly Condition[], rulePath: string): { permission: AttributeEntry[]; principal: AttributeEntry[] } | UnknownAttribute {
  const permission: AttributeEntry[] = [];
  const principal: AttributeEntry[] = [];
  for (const [index, condition] of conditions.entries()) {
    const attribute = attributeOfConditionKey(condition.key);
    const base = `${rulePath}.when[${index}]`;
    if (attribute === undefined) return { unknownAttribute: condition.key, path: `${base}.key` };
    const made = entry(attribute.kind, condition.key, condition.values, condition.notValues, `${base}.values`, `${base}.notValues`);
    if (made !== undefined) (attribute.side === 'permission' ? permission : principal).push(made);
  }
  return { permission, principal };
}

/** Rewrites trust-domain-bearing values `times` times, as istiod's shared rule objects are. */
function migrate(entryValue: AttributeEntry, bundle: TrustDomainBundle, times: number, foreign: string[]): AttributeEntry {
  if (entryValue.kind !== 'source.principal' && entryValue.kind !== 'source.trustDomain') return entryValue;
  let values = entryValue.values;
  let notValues = entryValue.notValues;
  for (let i = 0; i < times; i++) {
    if (entryValue.kind === 'source.principal') {
      const positive = values.length > 0 ? replaceTrustDomainAliases(values, bundle) : undefined;
      const negative = notValues.length > 0 ? replaceTrustDomainAliases(notValues, bundle) : undefined;
      values = positive?.principals ?? values;
      notValues = negative?.principals ?? notValues;
      if (i === 0) foreign.push(...(positive?.foreignTrustDomain ?? []), ...(negative?.foreignTrustDomain ?? []));
    } else {
      values = values.length > 0 ? expandTrustDomainAliases(values, bundle) : values;
      notValues = notValues.length > 0 ? expandTrustDomainAliases(notValues, bundle) : notValues;
    }
  }
  return { ...entryValue, values, notValues };
}

/**
 * Builds the model of `rule` (at `rulePath`, e.g. `spec.rules[2]`). istiod lets every `from`
 * entry share the `when`-derived principal tests and rewrites their trust domains once per entry;
 * that repetition is reproduced so the output stays identical.
 */
export function buildRuleModel(rule: Rule, rulePath: string, bundle: TrustDomainBundle): RuleModel | UnknownAttribute {
  const conditions = conditionEntries(rule.when ?? [], rulePath);
  if ('unknownAttribute' in conditions) return conditions;
  const from = rule.from ?? [];
  const to = rule.to ?? [];
  const foreign: string[] = [];
  const sharedPrincipal = conditions.principal.map((e) => migrate(e, bundle, Math.max(1, from.length), foreign));
  const principals =
    from.length === 0
      ? [sharedPrincipal]
      : from.map((f, index) => {
          const own = f.source === undefined ? [] : sourceEntries(f.source, `${rulePath}.from[${index}].source`);
          return [...own.map((e) => migrate(e, bundle, 1, foreign)), ...sharedPrincipal];
        });
  const permissions =
    to.length === 0
      ? [conditions.permission]
      : to.map((t, index) => [...(t.operation === undefined ? [] : operationEntries(t.operation, `${rulePath}.to[${index}].operation`)), ...conditions.permission]);
  return { permissions, principals, foreignPrincipals: [...new Set(foreign)] };
}
