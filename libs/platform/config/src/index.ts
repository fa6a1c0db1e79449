export { bool, int, list, oneOf, string } from './options';
export type { BoolOption, EnumOption, IntOption, ListOption, Option, OptionValue, StringOption } from './options';
export { NUMBER_UNIT_SUFFIXES, defineConfig, envName, screamingSnake } from './schema';
export type { ConfigSchema, ConfigValues } from './schema';
export { ConfigError, describeConfig, loadConfig } from './load';
export { goTogether } from './together';
