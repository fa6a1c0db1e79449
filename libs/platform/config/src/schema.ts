import type { Option, OptionValue } from './options';

/**
 * Number options must say their unit last (TigerStyle: `electionTimeoutTicks`, `bodyLimitBytes`).
 * `Count` is the unit of things counted, `Port` of TCP ports, `Cost` of bcrypt's log2 rounds.
 */
export const NUMBER_UNIT_SUFFIXES = ['Ms', 'Seconds', 'Bytes', 'Ticks', 'Count', 'Port', 'Cost', 'Percent'] as const;

export interface ConfigSchema<O extends Record<string, Option> = Record<string, Option>> {
  /** Environment variable prefix, e.g. `RAFT_NODE` for `RAFT_NODE_ELECTION_TIMEOUT_TICKS`. */
  readonly prefix: string;
  readonly options: O;
  /** Cross-field invariants: return one message per violation. */
  readonly validate?: (config: ConfigValues<O>) => readonly string[];
}

export type ConfigValues<O extends Record<string, Option>> = { readonly [K in keyof O]: OptionValue<O[K]> };

/** `electionTimeoutTicks` → `ELECTION_TIMEOUT_TICKS`. */
export function screamingSnake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export function envName(schema: Pick<ConfigSchema, 'prefix'>, key: string): string {
  return `${schema.prefix}_${screamingSnake(key)}`;
}

/** Declares an app's configuration; rejects a malformed schema at once (a programmer error). */
export function defineConfig<const O extends Record<string, Option>>(schema: ConfigSchema<O>): ConfigSchema<O> {
  if (!/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(schema.prefix)) {
    throw new TypeError(`defineConfig: prefix must be SCREAMING_SNAKE_CASE, got ${schema.prefix}`);
  }
  for (const [key, option] of Object.entries(schema.options)) {
    if (!/^[a-z][a-zA-Z0-9]*$/.test(key)) throw new TypeError(`defineConfig: option ${key} must be camelCase`);
    if (option.why.trim().length === 0) throw new TypeError(`defineConfig: option ${key} needs a why`);
    if (option.kind === 'int' && !NUMBER_UNIT_SUFFIXES.some((unit) => key.endsWith(unit))) {
      throw new TypeError(
        `defineConfig: number option ${key} must end with its unit (${NUMBER_UNIT_SUFFIXES.join(', ')})`,
      );
    }
  }
  return schema;
}
