// Envoy's string, header, value and metadata matchers, evaluated on simulated request data.
import type { HeaderMatcher, ListMatcher, MetadataMatcher, StringMatcher, ValueMatcher } from '@ward/mesh/envoy-api';
import { SimulatorError } from './errors';
import { fullMatchRegex } from './regex';

/** Request headers by lower-case name; several values of one name are kept in order. */
export type HeaderMap = ReadonlyMap<string, readonly string[]>;

/** Dynamic metadata: namespace → structured value (JSON-like). */
export type DynamicMetadata = Map<string, Record<string, unknown>>;

/** `StringMatcher` on one value. */
export function matchString(matcher: StringMatcher, value: string): boolean {
  const fold = matcher.ignoreCase === true;
  const subject = fold ? value.toLowerCase() : value;
  const pattern = (text: string): string => (fold ? text.toLowerCase() : text);
  if (matcher.exact !== undefined) return subject === pattern(matcher.exact);
  if (matcher.prefix !== undefined) return subject.startsWith(pattern(matcher.prefix));
  if (matcher.suffix !== undefined) return subject.endsWith(pattern(matcher.suffix));
  if (matcher.contains !== undefined) return subject.includes(pattern(matcher.contains));
  if (matcher.safeRegex?.regex !== undefined) return fullMatchRegex(matcher.safeRegex.regex).test(value);
  throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'StringMatcher without a supported match pattern', JSON.stringify(matcher));
}

/** `HeaderMatcher`: several values of one header are joined with `,`; an absent header never matches. */
export function matchHeader(matcher: HeaderMatcher, headers: HeaderMap): boolean {
  const values = headers.get((matcher.name ?? '').toLowerCase());
  const invert = matcher.invertMatch === true;
  if (values === undefined) {
    if (matcher.treatMissingHeaderAsEmpty === true) return evaluateHeaderValue(matcher, '') !== invert;
    return matcher.presentMatch === false ? !invert : false;
  }
  return evaluateHeaderValue(matcher, values.join(',')) !== invert;
}

function evaluateHeaderValue(matcher: HeaderMatcher, value: string): boolean {
  if (matcher.presentMatch !== undefined) return matcher.presentMatch;
  if (matcher.stringMatch !== undefined) return matchString(matcher.stringMatch, value);
  if (matcher.exactMatch !== undefined) return value === matcher.exactMatch;
  if (matcher.prefixMatch !== undefined) return value.startsWith(matcher.prefixMatch);
  if (matcher.suffixMatch !== undefined) return value.endsWith(matcher.suffixMatch);
  if (matcher.containsMatch !== undefined) return value.includes(matcher.containsMatch);
  if (matcher.safeRegexMatch?.regex !== undefined) return fullMatchRegex(matcher.safeRegexMatch.regex).test(value);
  throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'HeaderMatcher without a supported specifier', JSON.stringify(matcher));
}

/** `ValueMatcher` on a JSON-like value (undefined: the value is missing). */
export function matchValue(matcher: ValueMatcher, value: unknown): boolean {
  if (matcher.presentMatch !== undefined) return matcher.presentMatch === (value !== undefined);
  if (matcher.stringMatch !== undefined) return typeof value === 'string' && matchString(matcher.stringMatch, value);
  if (matcher.boolMatch !== undefined) return value === matcher.boolMatch;
  if (matcher.nullMatch !== undefined) return value === null;
  if (matcher.orMatch !== undefined) return (matcher.orMatch.valueMatchers ?? []).some((m) => matchValue(m, value));
  if (matcher.listMatch !== undefined) return matchList(matcher.listMatch, value);
  if (matcher.doubleMatch !== undefined) {
    if (typeof value !== 'number') return false;
    const { exact, range } = matcher.doubleMatch;
    if (exact !== undefined) return value === exact;
    return range !== undefined && value >= (range.start ?? 0) && value < (range.end ?? 0);
  }
  throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'ValueMatcher without a supported pattern', JSON.stringify(matcher));
}

function matchList(matcher: ListMatcher, value: unknown): boolean {
  if (!Array.isArray(value) || matcher.oneOf === undefined) return false;
  const oneOf = matcher.oneOf;
  return value.some((element) => matchValue(oneOf, element));
}

/** `MetadataMatcher` against dynamic metadata; a missing path never matches (before `invert`). */
export function matchMetadata(matcher: MetadataMatcher, metadata: DynamicMetadata): boolean {
  let current: unknown = metadata.get(matcher.filter ?? '');
  for (const segment of matcher.path ?? []) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) {
      current = undefined;
      break;
    }
    current = (current as Record<string, unknown>)[segment.key ?? ''];
  }
  const matched = matcher.value !== undefined && matchValue(matcher.value, current);
  return matcher.invert === true ? !matched : matched;
}
