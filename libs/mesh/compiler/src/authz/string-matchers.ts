// The three ways istiod turns a policy value into an Envoy matcher (spec §1.4 A, B, C).
import type { HeaderMatcher, PathMatcher, StringMatcher, UriTemplateMatchConfig } from '@ward/mesh/envoy-api';

/** The SPIFFE URI scheme Istio prepends to principals. */
export const SPIFFE_PREFIX = 'spiffe://';

/** Go's `regexp.QuoteMeta`: escapes `\.+*?()|[]{}^$`. */
export function quoteMeta(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/gu, '\\$&');
}

/** A `safeRegex` StringMatcher. */
export function regexMatcher(regex: string): StringMatcher {
  return { safeRegex: { regex } };
}

/** A `prefix` StringMatcher (ignoreCase only when true, as protojson omits false). */
export function prefixMatcher(prefix: string, ignoreCase = false): StringMatcher {
  return ignoreCase ? { prefix, ignoreCase } : { prefix };
}

/** A `suffix` StringMatcher. */
export function suffixMatcher(suffix: string, ignoreCase = false): StringMatcher {
  return ignoreCase ? { suffix, ignoreCase } : { suffix };
}

/** An `exact` StringMatcher. */
export function exactMatcher(exact: string, ignoreCase = false): StringMatcher {
  return ignoreCase ? { exact, ignoreCase } : { exact };
}

/**
 * Helper (A)/(B): `*` → regex `.+` (prefix ignored); `*abc` → suffix (or, with a prefix, the regex
 * `<prefix>.*<quoted abc>`); `abc*` → prefix `<prefix>abc`; otherwise exact `<prefix>abc`.
 */
export function stringMatcherWithPrefix(value: string, prefix: string): StringMatcher {
  if (value === '*') return regexMatcher('.+');
  if (value.startsWith('*')) {
    const rest = value.slice(1);
    return prefix === '' ? suffixMatcher(rest) : regexMatcher(`${prefix}.*${quoteMeta(rest)}`);
  }
  if (value.endsWith('*')) return prefixMatcher(prefix + value.slice(0, -1));
  return exactMatcher(prefix + value);
}

/** Helper (A): the generic string matcher used for SNI, metadata values, JWT claims and paths. */
export function stringMatcher(value: string): StringMatcher {
  return stringMatcherWithPrefix(value, '');
}

/** Helper (C): a HeaderMatcher; `ignoreCase` is used for `:authority` (hosts) only. */
export function headerMatcher(name: string, value: string, ignoreCase: boolean): HeaderMatcher {
  if (value === '*') return { name, presentMatch: true };
  if (value.startsWith('*')) return { name, stringMatch: suffixMatcher(value.slice(1), ignoreCase) };
  if (value.endsWith('*')) return { name, stringMatch: prefixMatcher(value.slice(0, -1), ignoreCase) };
  return { name, stringMatch: exactMatcher(value, ignoreCase) };
}

/** `paths` value without a template: `urlPath.path` with helper (A). */
export function pathMatcher(value: string): PathMatcher {
  return { path: stringMatcher(value) };
}

/** The path template operators istiod recognises. */
export const MATCH_ONE_TEMPLATE = '{*}';
export const MATCH_ANY_TEMPLATE = '{**}';

/** True when a path uses `{*}` or `{**}`. */
export function containsPathTemplate(value: string): boolean {
  return value.includes(MATCH_ONE_TEMPLATE) || value.includes(MATCH_ANY_TEMPLATE);
}

/** `{*}` → `*`, `{**}` → `**`, as Envoy's uri_template matcher spells them. */
export function uriTemplateConfig(value: string): UriTemplateMatchConfig {
  return { pathTemplate: value.replaceAll(MATCH_ANY_TEMPLATE, '**').replaceAll(MATCH_ONE_TEMPLATE, '*') };
}
