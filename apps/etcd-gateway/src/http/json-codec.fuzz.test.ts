// Fuzzing the JSON gateway's decoding (body text → JSON → proto bytes) with hostile bodies: keys
// named like JavaScript properties, duplicate keys, wrong types and deep nesting. Every body must
// either decode to a request the member's deserializer reads or be refused with INVALID_ARGUMENT
// (code 3); never an unmapped error (answered as 13), never a change to Object.prototype.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { statusOf } from '../errors/error-mapping';
import { encodeJsonRequest, messageType } from './json-codec';
import { parseBody } from './json-gateway';

const REQUEST_TYPES = [
  'etcdserverpb.RangeRequest',
  'etcdserverpb.PutRequest',
  'etcdserverpb.DeleteRangeRequest',
  'etcdserverpb.TxnRequest',
  'etcdserverpb.CompactionRequest',
  'etcdserverpb.LeaseGrantRequest',
  'etcdserverpb.LeaseTimeToLiveRequest',
  'etcdserverpb.AuthenticateRequest',
  'etcdserverpb.AuthUserAddRequest',
  'etcdserverpb.AuthRoleGrantPermissionRequest',
  'etcdserverpb.MemberAddRequest',
  'etcdserverpb.HashKVRequest',
] as const;

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'toLocaleString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
];

/** Every field name (proto and lowerCamelCase) of the request types and the messages they nest. */
function schemaNames(): string[] {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (typeName: string): void => {
    if (seen.has(typeName)) return;
    seen.add(typeName);
    for (const field of messageType(typeName).fieldsArray) {
      names.add(field.name);
      names.add(field.name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()));
      const nested = field.resolvedType;
      if (nested !== null && 'fieldsArray' in nested) visit(nested.fullName.replace(/^\./, ''));
    }
  };
  for (const type of REQUEST_TYPES) visit(type);
  return [...names];
}

const key = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom(...schemaNames()), fc.string({ maxLength: 8 }));

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }).map((n) => ({ raw: n.toString() })),
  fc.constantFrom('', 'YQ==', 'YWJj', '-_', 'EQUAL', 'VALUE', 'READWRITE', 'DESCEND', '42', '-1', '1.5', '1e3', '9223372036854775808', 'x'),
  fc.string({ maxLength: 12 }),
);

/** A JSON text tree: objects are lists of entries, so keys can repeat. */
type Node = null | boolean | number | string | { raw: string } | Node[] | { entries: Array<[string, Node]> };

const { node } = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar as fc.Arbitrary<Node>,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie('node')), { maxLength: 6 }).map((entries) => ({ entries })),
  ),
}));

function text(value: Node): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(text).join(',')}]`;
  if ('raw' in value) return value.raw;
  return `{${value.entries.map(([name, item]) => `${JSON.stringify(name)}:${text(item)}`).join(',')}}`;
}

/** A body that looks like a request: mostly known fields, with hostile keys and duplicates mixed in. */
const body = fc.array(fc.tuple(key, node), { maxLength: 8 }).map((entries) => text({ entries }));

/** The gateway's decoding of one body: 'ok' or the gRPC code it answers with. */
function outcome(typeName: string, bodyText: string): 'ok' | number {
  try {
    const bytes = encodeJsonRequest(typeName, parseBody(bodyText));
    messageType(typeName).decode(bytes); // what the member will read
    return 'ok';
  } catch (error) {
    const status = statusOf(error);
    if (status.unmapped) throw error;
    return status.code;
  }
}

const prototypeKeys = (): string[] => Object.getOwnPropertyNames(Object.prototype).sort();

describe('JSON gateway decoding under hostile bodies', () => {
  it('answers a valid request or INVALID_ARGUMENT, never an unmapped error, and leaves prototypes alone', () => {
    const before = prototypeKeys();
    fc.assert(
      fc.property(fc.constantFrom(...REQUEST_TYPES), body, (typeName, bodyText) => {
        expect([3, 'ok']).toContain(outcome(typeName, bodyText));
      }),
      { seed: 0x21_4a50, numRuns: 3000 },
    );
    expect(prototypeKeys()).toEqual(before);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('every JavaScript property name as a field, with any value, is ignored as an unknown field', () => {
    fc.assert(
      fc.property(fc.constantFrom(...REQUEST_TYPES), fc.constantFrom(...PROTOTYPE_NAMES), node, (typeName, name, value) => {
        const bodyText = `{${JSON.stringify(name)}:${text(value)}}`;
        expect(outcome(typeName, bodyText)).toBe('ok');
        expect(encodeJsonRequest(typeName, parseBody(bodyText))).toHaveLength(0);
      }),
      { seed: 0x21_4a51, numRuns: 1000 },
    );
  });

  it('deep nesting: a nested txn decodes or is refused with code 3; unknown deep arrays are ignored', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 20_000 }), fc.constantFrom(...PROTOTYPE_NAMES, 'bogus'), (levels, arrayDepth, name) => {
        let txn = `{"${name}":${'['.repeat(arrayDepth)}${']'.repeat(arrayDepth)}}`;
        for (let i = 0; i < levels; i++) txn = `{"success":[{"request_txn":${txn}}],"${name}":{}}`;
        expect([3, 'ok']).toContain(outcome('etcdserverpb.TxnRequest', txn));
      }),
      { seed: 0x21_4a52, numRuns: 200 },
    );
  });
});
