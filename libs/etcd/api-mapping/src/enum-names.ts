// etcd enum values in their three spellings: the domain's (etcd's Go/JSON names in capitals, as
// `@ward/etcd/kv-store` uses them), the etcd3 protos' PascalCase names (what grpc-js decodes with
// `enums: String`), and the proto numbers. Decoding accepts any of the three (a number outside
// the enum arrives as a number); encoding always writes the PascalCase name.
import type { CompareResult, CompareTarget, EventType, SortOrder, SortTarget } from '@ward/etcd/kv-store';

/** One enum: domain name → proto PascalCase name and number. */
export interface EnumTable<D extends string> {
  readonly name: string;
  readonly entries: readonly { readonly domain: D; readonly proto: string; readonly number: number }[];
}

function table<D extends string>(name: string, entries: readonly (readonly [D, string])[]): EnumTable<D> {
  return Object.freeze({ name, entries: Object.freeze(entries.map(([domain, proto], number) => Object.freeze({ domain, proto, number }))) });
}

export const SORT_ORDER_NAMES = table<SortOrder>('SortOrder', [
  ['NONE', 'None'],
  ['ASCEND', 'Ascend'],
  ['DESCEND', 'Descend'],
]);

export const SORT_TARGET_NAMES = table<SortTarget>('SortTarget', [
  ['KEY', 'Key'],
  ['VERSION', 'Version'],
  ['CREATE', 'Create'],
  ['MOD', 'Mod'],
  ['VALUE', 'Value'],
]);

export const COMPARE_RESULT_NAMES = table<CompareResult>('CompareResult', [
  ['EQUAL', 'Equal'],
  ['GREATER', 'Greater'],
  ['LESS', 'Less'],
  ['NOT_EQUAL', 'NotEqual'],
]);

export const COMPARE_TARGET_NAMES = table<CompareTarget>('CompareTarget', [
  ['VERSION', 'Version'],
  ['CREATE', 'Create'],
  ['MOD', 'Mod'],
  ['VALUE', 'Value'],
  ['LEASE', 'Lease'],
]);

export const EVENT_TYPE_NAMES = table<EventType>('EventType', [
  ['PUT', 'Put'],
  ['DELETE', 'Delete'],
]);

/** A watch filter (etcd's WatchCreateRequest.FilterType). */
export type WatchFilter = 'NOPUT' | 'NODELETE';

export const WATCH_FILTER_NAMES = table<WatchFilter>('FilterType', [
  ['NOPUT', 'Noput'],
  ['NODELETE', 'Nodelete'],
]);

/** etcd's authpb.Permission.Type. */
export type PermissionTypeName = 'READ' | 'WRITE' | 'READWRITE';

export const PERMISSION_TYPE_NAMES = table<PermissionTypeName>('Permission.Type', [
  ['READ', 'Read'],
  ['WRITE', 'Write'],
  ['READWRITE', 'Readwrite'],
]);

/**
 * The domain value of a decoded enum field, or undefined when it names nothing in the table (an
 * unknown number, as the decoder hands them over, or an unknown string).
 */
export function enumFromProto<D extends string>(enumTable: EnumTable<D>, value: unknown): D | undefined {
  if (value === undefined || value === null) return enumTable.entries[0]?.domain;
  for (const entry of enumTable.entries) {
    if (value === entry.proto || value === entry.domain || value === entry.number) return entry.domain;
  }
  return undefined;
}

/** The proto name of a domain enum value. */
export function enumToProto<D extends string>(enumTable: EnumTable<D>, value: D): string {
  const entry = enumTable.entries.find((candidate) => candidate.domain === value);
  if (entry === undefined) throw new TypeError(`${enumTable.name}: ${String(value)} is not a domain value`);
  return entry.proto;
}

/** The proto number of a domain enum value. */
export function enumNumber<D extends string>(enumTable: EnumTable<D>, value: D): number {
  const entry = enumTable.entries.find((candidate) => candidate.domain === value);
  if (entry === undefined) throw new TypeError(`${enumTable.name}: ${String(value)} is not a domain value`);
  return entry.number;
}
