/**
 * Base class of every expected operating failure in ward (jose's `JOSEError` shape).
 *
 * Each library declares its own subclasses with a fixed `code` in the `ERR_<SCOPE>_<CONDITION>`
 * shape and carries context as fields, never inside the message text.
 *
 * @example
 * ```ts
 * try { store.range(request) } catch (error) {
 *   if (error instanceof CodedError && error.code === 'ERR_KV_COMPACTED') { ... }
 * }
 * ```
 */
export class CodedError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** True when `value` is a CodedError whose code is `code`. */
export function hasCode<Code extends string>(value: unknown, code: Code): value is CodedError<Code> {
  return value instanceof CodedError && value.code === code;
}
