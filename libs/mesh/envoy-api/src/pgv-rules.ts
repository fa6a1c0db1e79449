// protoc-gen-validate constraints, as Envoy applies them when it loads configuration.
// The descriptor keeps them as flattened field options such as `(validate.rules).string.min_len`.
import type { Field } from 'protobufjs';
import type { SchemaIssue } from './schema-issue';

const RULE_PREFIX = '(validate.rules).';

/** Where constraint checking reports to. */
export interface RuleSink {
  readonly issues: SchemaIssue[];
  /** Rule names present on a checked field that this checker does not evaluate. */
  readonly uncheckedRules: Set<string>;
}

const rulesCache = new WeakMap<Field, ReadonlyMap<string, unknown>>();

/** The PGV rules of a field, keyed without the `(validate.rules).` prefix (memoized). */
export function fieldRules(field: Field): ReadonlyMap<string, unknown> {
  const cached = rulesCache.get(field);
  if (cached !== undefined) return cached;
  const rules = new Map<string, unknown>();
  for (const [key, value] of Object.entries(field.options ?? {})) {
    if (key.startsWith(RULE_PREFIX)) rules.set(key.slice(RULE_PREFIX.length), value);
  }
  rulesCache.set(field, rules);
  return rules;
}

/** Rules that only say a message-typed field must be set. */
export function presenceRuleFailed(rules: ReadonlyMap<string, unknown>): boolean {
  return rules.get('message.required') === true || rules.get('duration.required') === true || rules.get('any.required') === true;
}

const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/u;
const HEADER_VALUE_STRICT = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/u;
const HEADER_LAX = /^[^\u0000\u000A\u000D]*$/u;

function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

function fail(sink: RuleSink, path: string, rule: string, detail: string): void {
  sink.issues.push({ code: 'ERR_ENVOY_CONSTRAINT', path, message: `violates ${rule}: ${detail}` });
}

function checkString(value: string, rule: string, bound: unknown, rules: ReadonlyMap<string, unknown>, path: string, sink: RuleSink, scope: string): void {
  const name = `${scope}string.${rule}`;
  const ignoreEmpty = rules.get(`${scope}string.ignore_empty`) === true;
  if (ignoreEmpty && value === '') return;
  switch (rule) {
    case 'min_len':
      if (codePointLength(value) < Number(bound)) fail(sink, path, name, `length ${codePointLength(value)} < ${String(bound)}`);
      return;
    case 'max_len':
      if (codePointLength(value) > Number(bound)) fail(sink, path, name, `length ${codePointLength(value)} > ${String(bound)}`);
      return;
    case 'min_bytes':
      if (utf8Length(value) < Number(bound)) fail(sink, path, name, `${utf8Length(value)} bytes < ${String(bound)}`);
      return;
    case 'max_bytes':
      if (utf8Length(value) > Number(bound)) fail(sink, path, name, `${utf8Length(value)} bytes > ${String(bound)}`);
      return;
    case 'prefix':
      if (!value.startsWith(String(bound))) fail(sink, path, name, `missing prefix ${String(bound)}`);
      return;
    case 'pattern':
      if (!new RegExp(String(bound), 'u').test(value)) fail(sink, path, name, `does not match ${String(bound)}`);
      return;
    case 'in':
      if (!asList(bound).includes(value)) fail(sink, path, name, `not one of ${JSON.stringify(bound)}`);
      return;
    case 'well_known_regex': {
      const strict = rules.get(`${scope}string.strict`) !== false;
      const regex = !strict ? HEADER_LAX : bound === 'HTTP_HEADER_NAME' ? HEADER_NAME_STRICT : HEADER_VALUE_STRICT;
      if (bound !== 'HTTP_HEADER_NAME' && bound !== 'HTTP_HEADER_VALUE') {
        sink.uncheckedRules.add(`${name}=${String(bound)}`);
        return;
      }
      if (!regex.test(value)) fail(sink, path, name, `not a valid ${String(bound)}`);
      return;
    }
    case 'strict':
    case 'ignore_empty':
      return; // modifiers of other rules
    default:
      sink.uncheckedRules.add(name);
  }
}

function base64Length(text: string): number {
  const clean = text.replace(/=+$/u, '');
  return Math.floor((clean.length * 3) / 4);
}

function checkBytes(value: unknown, rule: string, bound: unknown, path: string, sink: RuleSink, scope: string): void {
  if (typeof value !== 'string') return;
  const length = base64Length(value);
  if (rule === 'min_len' && length < Number(bound)) fail(sink, path, `${scope}bytes.min_len`, `${length} bytes`);
  else if (rule === 'max_len' && length > Number(bound)) fail(sink, path, `${scope}bytes.max_len`, `${length} bytes`);
  else if (rule !== 'min_len' && rule !== 'max_len') sink.uncheckedRules.add(`${scope}bytes.${rule}`);
}

function checkNumber(value: number, kind: string, rule: string, bound: unknown, path: string, sink: RuleSink, scope: string): void {
  const name = `${scope}${kind}.${rule}`;
  const limit = Number(bound);
  const failed =
    (rule === 'gt' && !(value > limit)) ||
    (rule === 'gte' && !(value >= limit)) ||
    (rule === 'lt' && !(value < limit)) ||
    (rule === 'lte' && !(value <= limit)) ||
    (rule === 'const' && value !== limit) ||
    (rule === 'in' && !asList(bound).map(Number).includes(value)) ||
    (rule === 'not_in' && asList(bound).map(Number).includes(value));
  if (!['gt', 'gte', 'lt', 'lte', 'const', 'in', 'not_in'].includes(rule)) {
    sink.uncheckedRules.add(name);
    return;
  }
  if (failed) fail(sink, path, name, `${value} (bound ${JSON.stringify(bound)})`);
}

/** Duration JSON (`"1.5s"`) in nanoseconds, or undefined when malformed. */
export function durationNanos(text: string): bigint | undefined {
  const match = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/u.exec(text);
  if (match === null) return undefined;
  const nanos = BigInt(match[2] ?? '0') * 1_000_000_000n + BigInt((match[3] ?? '').padEnd(9, '0') || '0');
  return match[1] === '-' ? -nanos : nanos;
}

function checkDuration(value: string, rules: ReadonlyMap<string, unknown>, path: string, sink: RuleSink): void {
  const actual = durationNanos(value);
  if (actual === undefined) return; // the decoder reports malformed durations
  for (const comparator of ['gt', 'gte', 'lt', 'lte']) {
    const seconds = rules.get(`duration.${comparator}.seconds`);
    const nanos = rules.get(`duration.${comparator}.nanos`);
    if (seconds === undefined && nanos === undefined) continue;
    const bound = BigInt(Number(seconds ?? 0)) * 1_000_000_000n + BigInt(Number(nanos ?? 0));
    const ok =
      comparator === 'gt' ? actual > bound : comparator === 'gte' ? actual >= bound : comparator === 'lt' ? actual < bound : actual <= bound;
    if (!ok) fail(sink, path, `duration.${comparator}`, `${value} (bound ${bound}ns)`);
  }
}

/**
 * Checks one value against rules of one scope (`''` for the field itself, `repeated.items.` for
 * list elements, `map.keys.` / `map.values.` for map entries).
 */
function checkValue(value: unknown, rules: ReadonlyMap<string, unknown>, scope: string, path: string, sink: RuleSink): void {
  for (const [key, bound] of rules) {
    if (!key.startsWith(scope)) continue;
    const rest = key.slice(scope.length);
    const dot = rest.indexOf('.');
    if (dot < 0) continue;
    const kind = rest.slice(0, dot);
    const rule = rest.slice(dot + 1);
    if (rule.includes('.') && kind !== 'duration') continue; // deeper scopes (items of items) are handled by their own call
    if (kind === 'string' && typeof value === 'string') checkString(value, rule, bound, rules, path, sink, scope);
    else if (['uint32', 'int32', 'uint64', 'int64', 'double', 'float', 'sint32', 'fixed32'].includes(kind)) {
      if (value !== undefined) checkNumber(Number(value), kind, rule, bound, path, sink, scope);
    } else if (kind === 'enum') {
      // defined_only: the decoder accepts defined values only; not_in: checked by checkFieldRules.
      if (rule === 'defined_only' || (rule === 'not_in' && scope === '')) continue;
      sink.uncheckedRules.add(`${scope}${kind}.${rule}`);
    } else if (kind === 'bytes') {
      checkBytes(value, rule, bound, path, sink, scope);
    } else if (kind === 'bool') {
      if (rule === 'const' && value !== bound) fail(sink, path, `${scope}bool.const`, `${String(value)} != ${String(bound)}`);
    } else if (kind === 'duration') {
      if (typeof value === 'string' && scope === '') checkDuration(value, rules, path, sink);
    } else if (kind === 'message' || kind === 'any') {
      if (rule !== 'required' && rule !== 'skip') sink.uncheckedRules.add(`${scope}${kind}.${rule}`);
    } else if (kind !== 'repeated' && kind !== 'map') {
      sink.uncheckedRules.add(`${scope}${kind}.${rule}`);
    }
  }
}

/**
 * Applies a field's rules to its JSON value. `value` is undefined when the field is absent; scalar
 * rules then see the proto3 default, as protoc-gen-validate does.
 */
export function checkFieldRules(
  field: Field,
  rules: ReadonlyMap<string, unknown>,
  value: unknown,
  enumNumber: (name: unknown) => number | undefined,
  path: string,
  sink: RuleSink,
): void {
  if (rules.size === 0) return;
  if (value === undefined && presenceRuleFailed(rules)) {
    fail(sink, path, 'required', 'field must be set');
    return;
  }
  if (field.map) {
    const entries = Object.entries((value ?? {}) as Record<string, unknown>);
    const min = rules.get('map.min_pairs');
    const max = rules.get('map.max_pairs');
    if (min !== undefined && entries.length < Number(min)) fail(sink, path, 'map.min_pairs', `${entries.length} entries`);
    if (max !== undefined && entries.length > Number(max)) fail(sink, path, 'map.max_pairs', `${entries.length} entries`);
    for (const [key, entry] of entries) {
      checkValue(key, rules, 'map.keys.', `${path}[${JSON.stringify(key)}]`, sink);
      checkValue(entry, rules, 'map.values.', `${path}[${JSON.stringify(key)}]`, sink);
    }
    return;
  }
  if (field.repeated) {
    const items = (value ?? []) as unknown[];
    const min = rules.get('repeated.min_items');
    const max = rules.get('repeated.max_items');
    if (min !== undefined && items.length < Number(min)) fail(sink, path, 'repeated.min_items', `${items.length} items`);
    if (max !== undefined && items.length > Number(max)) fail(sink, path, 'repeated.max_items', `${items.length} items`);
    if (rules.get('repeated.unique') === true && new Set(items.map((i) => JSON.stringify(i))).size !== items.length) {
      fail(sink, path, 'repeated.unique', 'duplicate items');
    }
    items.forEach((item, index) => checkValue(item, rules, 'repeated.items.', `${path}[${index}]`, sink));
    return;
  }
  if (value === undefined && field.resolvedType !== null && 'fieldsArray' in field.resolvedType) return;
  const effective = value ?? defaultOf(field);
  const notIn = rules.get('enum.not_in');
  if (notIn !== undefined) {
    const number = enumNumber(effective);
    if (number !== undefined && asList(notIn).map(Number).includes(number)) fail(sink, path, 'enum.not_in', `value ${String(effective)}`);
  }
  checkValue(effective, rules, '', path, sink);
}

function defaultOf(field: Field): unknown {
  if (field.resolvedType !== null) return 0; // enum: the zero value
  switch (field.type) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    default:
      return 0;
  }
}
