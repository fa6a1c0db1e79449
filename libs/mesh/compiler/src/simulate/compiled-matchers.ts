// Envoy's string, header, value and metadata matchers compiled once into predicates: patterns
// are case-folded, regexes built and header names lower-cased ahead of time, so evaluating a
// request does no parsing and allocates nothing. Semantics are those of matchers.ts; a matcher
// the simulator cannot evaluate compiles to a predicate that throws when it is reached, exactly
// where the interpreted matcher would have thrown.
import type { HeaderMatcher, MetadataMatcher, StringMatcher, ValueMatcher } from '@ward/mesh/envoy-api';
import { SimulatorError } from './errors';
import type { DynamicMetadata, HeaderMap } from './matchers';
import { fullMatchRegex } from './regex';

/** A compiled test on one string. */
export type StringPredicate = (value: string) => boolean;
/** A compiled test on a request's headers. */
export type HeaderPredicate = (headers: HeaderMap) => boolean;
/** A compiled test on a JSON-like value (undefined: missing). */
export type ValuePredicate = (value: unknown) => boolean;
/** A compiled test on dynamic metadata. */
export type MetadataPredicate = (metadata: DynamicMetadata) => boolean;

/** A predicate that throws `error` when evaluated (the construct is refused only if reached). */
export function refusing<A extends unknown[]>(error: SimulatorError): (...args: A) => boolean {
  return () => {
    throw error;
  };
}

function unsupported(message: string, subject: unknown): SimulatorError {
  return new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', message, JSON.stringify(subject));
}

function compileRegex(pattern: string): StringPredicate {
  try {
    const regex = fullMatchRegex(pattern);
    return (value) => regex.test(value);
  } catch (error) {
    if (error instanceof SimulatorError) return refusing(error);
    throw error;
  }
}

function foldedTest(kind: 'exact' | 'prefix' | 'suffix' | 'contains', pattern: string): StringPredicate {
  const folded = pattern.toLowerCase();
  switch (kind) {
    case 'exact':
      return (value) => value.toLowerCase() === folded;
    case 'prefix':
      return (value) => value.toLowerCase().startsWith(folded);
    case 'suffix':
      return (value) => value.toLowerCase().endsWith(folded);
    case 'contains':
      return (value) => value.toLowerCase().includes(folded);
  }
}

/** `StringMatcher` compiled (ignoreCase folds the pattern once). */
export function compileStringMatcher(matcher: StringMatcher): StringPredicate {
  const fold = matcher.ignoreCase === true;
  const { exact, prefix, suffix, contains } = matcher;
  if (exact !== undefined) return fold ? foldedTest('exact', exact) : (value) => value === exact;
  if (prefix !== undefined) return fold ? foldedTest('prefix', prefix) : (value) => value.startsWith(prefix);
  if (suffix !== undefined) return fold ? foldedTest('suffix', suffix) : (value) => value.endsWith(suffix);
  if (contains !== undefined) return fold ? foldedTest('contains', contains) : (value) => value.includes(contains);
  if (matcher.safeRegex?.regex !== undefined) return compileRegex(matcher.safeRegex.regex);
  return refusing(unsupported('StringMatcher without a supported match pattern', matcher));
}

function compileHeaderValue(matcher: HeaderMatcher): StringPredicate {
  if (matcher.presentMatch !== undefined) {
    const present = matcher.presentMatch;
    return () => present;
  }
  if (matcher.stringMatch !== undefined) return compileStringMatcher(matcher.stringMatch);
  const { exactMatch, prefixMatch, suffixMatch, containsMatch } = matcher;
  if (exactMatch !== undefined) return (value) => value === exactMatch;
  if (prefixMatch !== undefined) return (value) => value.startsWith(prefixMatch);
  if (suffixMatch !== undefined) return (value) => value.endsWith(suffixMatch);
  if (containsMatch !== undefined) return (value) => value.includes(containsMatch);
  if (matcher.safeRegexMatch?.regex !== undefined) return compileRegex(matcher.safeRegexMatch.regex);
  return refusing(unsupported('HeaderMatcher without a supported specifier', matcher));
}

/** `HeaderMatcher` compiled: several values of one header are joined with `,`; absence never matches. */
export function compileHeaderMatcher(matcher: HeaderMatcher): HeaderPredicate {
  const name = (matcher.name ?? '').toLowerCase();
  const invert = matcher.invertMatch === true;
  const test = compileHeaderValue(matcher);
  const whenMissing = matcher.treatMissingHeaderAsEmpty === true ? undefined : matcher.presentMatch === false ? !invert : false;
  return (headers) => {
    const values = headers.get(name);
    if (values === undefined) return whenMissing ?? test('') !== invert;
    return test(values.length === 1 ? (values[0] as string) : values.join(',')) !== invert;
  };
}

function compileDoubleMatch(matcher: NonNullable<ValueMatcher['doubleMatch']>): ValuePredicate {
  const { exact, range } = matcher;
  if (exact !== undefined) return (value) => typeof value === 'number' && value === exact;
  if (range === undefined) return () => false;
  const start = range.start ?? 0;
  const end = range.end ?? 0;
  return (value) => typeof value === 'number' && value >= start && value < end;
}

/** `ValueMatcher` compiled. */
export function compileValueMatcher(matcher: ValueMatcher, depth = 0): ValuePredicate {
  if (depth > 64) return refusing(unsupported('ValueMatcher nested too deeply', '…'));
  if (matcher.presentMatch !== undefined) {
    const present = matcher.presentMatch;
    return (value) => present === (value !== undefined);
  }
  if (matcher.stringMatch !== undefined) {
    const test = compileStringMatcher(matcher.stringMatch);
    return (value) => typeof value === 'string' && test(value);
  }
  if (matcher.boolMatch !== undefined) {
    const expected = matcher.boolMatch;
    return (value) => value === expected;
  }
  if (matcher.nullMatch !== undefined) return (value) => value === null;
  if (matcher.orMatch !== undefined) {
    const tests = (matcher.orMatch.valueMatchers ?? []).map((m) => compileValueMatcher(m, depth + 1));
    return (value) => tests.some((test) => test(value));
  }
  if (matcher.listMatch !== undefined) {
    const oneOf = matcher.listMatch.oneOf;
    if (oneOf === undefined) return () => false;
    const test = compileValueMatcher(oneOf, depth + 1);
    return (value) => Array.isArray(value) && value.some((element) => test(element));
  }
  if (matcher.doubleMatch !== undefined) return compileDoubleMatch(matcher.doubleMatch);
  return refusing(unsupported('ValueMatcher without a supported pattern', matcher));
}

/** `MetadataMatcher` compiled: a missing path never matches (before `invert`). */
export function compileMetadataMatcher(matcher: MetadataMatcher): MetadataPredicate {
  const filter = matcher.filter ?? '';
  const keys = (matcher.path ?? []).map((segment) => segment.key ?? '');
  const invert = matcher.invert === true;
  const test = matcher.value === undefined ? undefined : compileValueMatcher(matcher.value);
  return (metadata) => {
    let current: unknown = metadata.get(filter);
    for (const key of keys) {
      if (typeof current !== 'object' || current === null || Array.isArray(current)) {
        current = undefined;
        break;
      }
      current = (current as Record<string, unknown>)[key];
    }
    const matched = test !== undefined && test(current);
    return invert ? !matched : matched;
  };
}
