// Runtime reflection over the generated Envoy descriptor. Nothing is built at import time.
// protobufjs is CommonJS: only its default export exists under Node's ESM loader.
import protobuf, { type Enum, type Type, type Root } from 'protobufjs';
import { envoyDescriptor } from './generated/descriptor';

/** The prefix every `google.protobuf.Any` type URL carries in Envoy configuration. */
export const TYPE_URL_PREFIX = 'type.googleapis.com/';

let root: Root | undefined;

/** The protobufjs root holding every Envoy message the compiler may emit (memoized). */
export function envoyRoot(): Root {
  root ??= protobuf.Root.fromJSON(envoyDescriptor as never);
  return root;
}

/** The message type with the given full name (no leading dot), or undefined. */
export function findMessageType(fullName: string): Type | undefined {
  const found = envoyRoot().lookup(fullName);
  return found !== null && 'fieldsArray' in found ? (found as Type) : undefined;
}

/** The enum with the given full name (no leading dot), or undefined. */
export function findEnum(fullName: string): Enum | undefined {
  const found = envoyRoot().lookup(fullName);
  return found !== null && 'values' in found && !('fieldsArray' in found) ? (found as Enum) : undefined;
}

/** `type.googleapis.com/a.b.C` → `a.b.C`; undefined when the URL has no `/`. */
export function typeNameOfUrl(typeUrl: string): string | undefined {
  const slash = typeUrl.lastIndexOf('/');
  if (slash < 0 || slash === typeUrl.length - 1) return undefined;
  return typeUrl.slice(slash + 1);
}

/** Full name of a reflected type without protobufjs's leading dot. */
export function fullNameOf(type: Type | Enum): string {
  return type.fullName.startsWith('.') ? type.fullName.slice(1) : type.fullName;
}
