import { CodedError } from '@ward/shared/errors';
import type { Option } from './options';
import { envName, type ConfigSchema, type ConfigValues } from './schema';

/** Every problem found in the environment, reported together at boot. */
export class ConfigError extends CodedError<'ERR_CONFIG_INVALID'> {
  readonly problems: readonly string[];

  constructor(prefix: string, problems: readonly string[]) {
    super('ERR_CONFIG_INVALID', `invalid ${prefix} configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; problem: string };

const MAX_ENV_VALUE_CHARS = 65_536;

function shown(option: Option, raw: string): string {
  return option.secret ? '<redacted>' : JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
}

function parseOption(option: Option, raw: string): Parsed {
  const got = `got ${shown(option, raw)}`;
  switch (option.kind) {
    case 'int': {
      const value = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < option.min || value > option.max) {
        return { ok: false, problem: `must be an integer in [${option.min}, ${option.max}], ${got}` };
      }
      return { ok: true, value };
    }
    case 'bool': {
      const normalized = raw.trim().toLowerCase();
      if (['true', '1', 'yes'].includes(normalized)) return { ok: true, value: true };
      if (['false', '0', 'no'].includes(normalized)) return { ok: true, value: false };
      return { ok: false, problem: `must be true or false, ${got}` };
    }
    case 'enum':
      return option.values.includes(raw.trim())
        ? { ok: true, value: raw.trim() }
        : { ok: false, problem: `must be one of ${option.values.join(', ')}, ${got}` };
    case 'string':
      if (raw.length > option.maxLengthChars) {
        return { ok: false, problem: `must be at most ${option.maxLengthChars} characters` };
      }
      if (option.pattern && !option.pattern.test(raw)) {
        return { ok: false, problem: `must match ${option.pattern}, ${got}` };
      }
      return { ok: true, value: raw };
    case 'list': {
      const items = raw.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
      if (items.length > option.maxItems) return { ok: false, problem: `must have at most ${option.maxItems} items` };
      const bad = option.pattern ? items.find((item) => !option.pattern!.test(item)) : undefined;
      if (bad !== undefined) return { ok: false, problem: `item ${shown(option, bad)} must match ${option.pattern}` };
      return { ok: true, value: Object.freeze(items) };
    }
  }
}

/**
 * Reads an app's configuration from environment variables (`<PREFIX>_<OPTION>`), applying
 * defaults. Unknown `<PREFIX>_*` variables, malformed and out-of-range values and broken
 * cross-field invariants are all collected and thrown as one ConfigError. The result is frozen.
 */
export function loadConfig<O extends Record<string, Option>>(
  schema: ConfigSchema<O>,
  env: Readonly<Record<string, string | undefined>>,
): ConfigValues<O> {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const known = new Map<string, string>();
  for (const [key, option] of Object.entries(schema.options)) {
    const name = envName(schema, key);
    known.set(name, key);
    const raw = env[name];
    if (raw === undefined) {
      values[key] = option.default;
      continue;
    }
    if (raw.length > MAX_ENV_VALUE_CHARS) {
      problems.push(`${name}: value is longer than ${MAX_ENV_VALUE_CHARS} characters`);
      continue;
    }
    const parsed = parseOption(option, raw);
    if (parsed.ok) values[key] = parsed.value;
    else problems.push(`${name}: ${parsed.problem}`);
  }
  for (const name of Object.keys(env).sort()) {
    if (name.startsWith(`${schema.prefix}_`) && !known.has(name)) {
      problems.push(`${name}: unknown option (known: ${[...known.keys()].sort().join(', ')})`);
    }
  }
  if (problems.length === 0 && schema.validate) {
    problems.push(...schema.validate(values as ConfigValues<O>));
  }
  if (problems.length > 0) throw new ConfigError(schema.prefix, problems);
  return Object.freeze(values) as ConfigValues<O>;
}

/** A table of every option: variable, default and why (for --help and the docs). */
export function describeConfig<O extends Record<string, Option>>(schema: ConfigSchema<O>): string {
  const rows = Object.entries(schema.options).map(([key, option]) => {
    const shownDefault = option.secret ? '<secret>' : JSON.stringify(option.default);
    const range = option.kind === 'int' ? ` [${option.min}..${option.max}]` : option.kind === 'enum' ? ` (${option.values.join('|')})` : '';
    return `${envName(schema, key)}=${shownDefault}${range}\n    ${option.why}`;
  });
  return rows.join('\n');
}
