/**
 * The `istio.io/dry-run` annotation of an AuthorizationPolicy. istiod parses its value as a Go
 * boolean; a value that does not parse leaves the policy enforced (and is a validation error).
 */
import type { ObjectMeta } from './meta';

/** The annotation key. */
export const DRY_RUN_ANNOTATION = 'istio.io/dry-run';

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's `strconv.ParseBool`: the boolean, or `undefined` when the text is not one. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_TRUE.has(text)) return true;
  if (GO_FALSE.has(text)) return false;
  return undefined;
}

/** The annotation as istiod reads it. */
export type DryRunSetting =
  | { readonly kind: 'absent' }
  | { readonly kind: 'parsed'; readonly dryRun: boolean; readonly value: string }
  | { readonly kind: 'invalid'; readonly value: string };

/** Reads the dry-run annotation of `metadata`. */
export function dryRunSetting(metadata: ObjectMeta): DryRunSetting {
  const value = metadata.annotations[DRY_RUN_ANNOTATION];
  if (value === undefined) return { kind: 'absent' };
  const parsed = parseGoBool(value);
  return parsed === undefined ? { kind: 'invalid', value } : { kind: 'parsed', dryRun: parsed, value };
}

/** True iff istiod would put the policy into shadow rules (an invalid value means enforced). */
export function isDryRun(metadata: ObjectMeta): boolean {
  const setting = dryRunSetting(metadata);
  return setting.kind === 'parsed' && setting.dryRun;
}
