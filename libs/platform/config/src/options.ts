// Option builders for an app's configuration schema. Each option has a default, a one-line `why`
// and, for numbers, a unit at the end of its name (checked when the schema is defined).

export interface OptionBase<T> {
  readonly kind: 'int' | 'string' | 'bool' | 'enum' | 'list';
  readonly default: T;
  /** Why the option exists (shown by describeConfig). */
  readonly why: string;
  /** Never echo the value in errors or descriptions. */
  readonly secret?: boolean;
}

export interface IntOption extends OptionBase<number> {
  readonly kind: 'int';
  readonly min: number;
  readonly max: number;
}

export interface StringOption extends OptionBase<string> {
  readonly kind: 'string';
  readonly pattern?: RegExp;
  readonly maxLengthChars: number;
}

export interface BoolOption extends OptionBase<boolean> {
  readonly kind: 'bool';
}

export interface EnumOption<V extends string = string> extends OptionBase<V> {
  readonly kind: 'enum';
  readonly values: readonly V[];
}

export interface ListOption extends OptionBase<readonly string[]> {
  readonly kind: 'list';
  readonly pattern?: RegExp;
  readonly maxItems: number;
}

export type Option = IntOption | StringOption | BoolOption | EnumOption | ListOption;

export type OptionValue<O> = O extends IntOption
  ? number
  : O extends StringOption
    ? string
    : O extends BoolOption
      ? boolean
      : O extends EnumOption<infer V>
        ? V
        : O extends ListOption
          ? readonly string[]
          : never;

const DEFAULT_STRING_MAX_LENGTH_CHARS = 4096;
const DEFAULT_LIST_MAX_ITEMS = 64;

export function int(spec: { default: number; min: number; max: number; why: string }): IntOption {
  if (!Number.isSafeInteger(spec.min) || !Number.isSafeInteger(spec.max) || spec.min > spec.max) {
    throw new TypeError(`int option: min and max must be safe integers with min <= max (${spec.min}, ${spec.max})`);
  }
  if (!Number.isSafeInteger(spec.default) || spec.default < spec.min || spec.default > spec.max) {
    throw new TypeError(`int option: default ${spec.default} is outside [${spec.min}, ${spec.max}]`);
  }
  return { kind: 'int', ...spec };
}

export function string(spec: {
  default: string;
  why: string;
  pattern?: RegExp;
  maxLengthChars?: number;
  secret?: boolean;
}): StringOption {
  return { kind: 'string', maxLengthChars: DEFAULT_STRING_MAX_LENGTH_CHARS, ...spec };
}

export function bool(spec: { default: boolean; why: string }): BoolOption {
  return { kind: 'bool', ...spec };
}

export function oneOf<const V extends string>(spec: { default: V; values: readonly V[]; why: string }): EnumOption<V> {
  if (!spec.values.includes(spec.default)) {
    throw new TypeError(`enum option: default ${spec.default} is not one of ${spec.values.join(', ')}`);
  }
  return { kind: 'enum', ...spec };
}

export function list(spec: { default: readonly string[]; why: string; pattern?: RegExp; maxItems?: number }): ListOption {
  return { kind: 'list', maxItems: DEFAULT_LIST_MAX_ITEMS, ...spec };
}
