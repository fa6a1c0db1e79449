// Envoy's safe_regex is RE2 with full-match semantics. The simulator runs JavaScript regexes, so
// it accepts only the shared subset (no lookaround, no backreferences) and anchors the pattern.
import { SimulatorError } from './errors';

const MAX_CACHED = 4_096;
const MAX_PATTERN_LENGTH = 4_096;
const cache = new Map<string, RegExp>();

/** Constructs JavaScript and RE2 disagree on (or RE2 lacks): refused. */
const UNSUPPORTED = /\(\?[=!<]|\\[1-9]|\\k<|\(\?<[A-Za-z]/u;

/** A compiled full-match regex for an RE2 pattern. */
export function fullMatchRegex(pattern: string): RegExp {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  if (pattern.length > MAX_PATTERN_LENGTH || UNSUPPORTED.test(pattern)) {
    throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', 'regex uses a construct the simulator cannot evaluate like RE2', pattern);
  }
  let compiled: RegExp;
  try {
    compiled = new RegExp(`^(?:${pattern})$`, 'u');
  } catch (error) {
    throw new SimulatorError('ERR_MESH_SIM_UNSUPPORTED_MATCHER', `regex does not compile: ${String(error)}`, pattern);
  }
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}
