/**
 * A small description of the protobuf messages istiod decodes the `spec` into, enough to decode
 * JSON/YAML exactly as jsonpb does: field names in proto or JSON form, types, enums and maps.
 */

/** How one field is decoded. */
export type FieldType =
  | { readonly type: 'string' }
  | { readonly type: 'string-list' }
  | { readonly type: 'string-map' }
  | { readonly type: 'enum'; readonly enumName: string; readonly values: readonly string[] }
  | { readonly type: 'message'; readonly message: () => MessageSchema }
  | { readonly type: 'message-list'; readonly message: () => MessageSchema }
  | { readonly type: 'uint32-map'; readonly message: () => MessageSchema };

/** One field: its JSON (camelCase) name, its proto name, its type and whether an absent value gets a default. */
export interface FieldSchema {
  readonly jsonName: string;
  readonly protoName: string;
  readonly fieldType: FieldType;
  /** Absent string → `''`, absent enum → first value, absent string map → `{}`. */
  readonly withDefault?: boolean;
}

/** A message: its full proto name (used in messages) and its fields. */
export interface MessageSchema {
  readonly fullName: string;
  readonly fields: readonly FieldSchema[];
}

/** Builds a field whose proto name is derived from its JSON name (`notPrincipals` → `not_principals`). */
export function field(jsonName: string, fieldType: FieldType, withDefault = false): FieldSchema {
  const protoName = jsonName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  return { jsonName, protoName, fieldType, withDefault };
}
