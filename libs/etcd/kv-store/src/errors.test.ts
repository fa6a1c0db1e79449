import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WIRE_ERRORS } from '@ward/etcd/wire-errors';
import { KV_ERROR_CODES, KVCompactedError, KVDuplicateKeyError, KVEmptyKeyError, KVError, KVFutureRevisionError, KVInvalidSortOptionError, KVKeyNotFoundError, KVLeaseNotFoundError, KVLeaseProvidedError, KVSnapshotInvalidError, KVTooManyOpsError, KVValueProvidedError } from './errors';
import { KV_ERROR_WIRE_NAMES, toWireError } from './wire-mapping';

const catalogue = readFileSync(fileURLToPath(new URL('../docs/errors.md', import.meta.url)), 'utf8');
const documented = new Set([...catalogue.matchAll(/^\| `(ERR_KV_[A-Z_]+)` \|/gm)].map((match) => match[1]!));

const samples: KVError[] = [
  new KVEmptyKeyError(),
  new KVKeyNotFoundError('empty-request-op'),
  new KVValueProvidedError(),
  new KVLeaseProvidedError(),
  new KVTooManyOpsError(129, 128),
  new KVDuplicateKeyError(new Uint8Array([97])),
  new KVInvalidSortOptionError('sortOrder'),
  new KVCompactedError(1, 2),
  new KVFutureRevisionError(9, 3),
  new KVLeaseNotFoundError(5n),
  new KVSnapshotInvalidError('truncated', 0),
];

describe('error catalogue (docs/errors.md) and wire mapping', () => {
  it('documents every exported code and nothing else', () => {
    expect([...documented].sort()).toEqual([...KV_ERROR_CODES].sort());
  });

  it('has one class per code, each a KVError', () => {
    expect(samples.map((error) => error.code).sort()).toEqual([...KV_ERROR_CODES].sort());
    for (const error of samples) expect(error).toBeInstanceOf(KVError);
  });

  it('maps every client-facing code to the etcd wire error the catalogue names, with its exact text', () => {
    for (const error of samples) {
      const wire = toWireError(error);
      if (error.code === 'ERR_KV_SNAPSHOT_INVALID') {
        expect(wire).toBeUndefined();
        continue;
      }
      const name = KV_ERROR_WIRE_NAMES[error.code];
      expect(wire!.wireName).toBe(name);
      expect(wire!.message).toBe(WIRE_ERRORS[name].message);
      expect(wire!.cause).toBe(error);
      const row = catalogue.split('\n').find((line) => line.startsWith(`| \`${error.code}\``))!;
      expect(row).toContain(`\`${name}\``);
      expect(row).toContain(WIRE_ERRORS[name].message);
    }
  });

  it('carries the exact etcd texts of the mvcc and v3rpc errors', () => {
    expect(toWireError(new KVCompactedError(1, 2))!.message).toBe('etcdserver: mvcc: required revision has been compacted');
    expect(toWireError(new KVFutureRevisionError(9, 3))!.message).toBe('etcdserver: mvcc: required revision is a future revision');
    expect(toWireError(new KVDuplicateKeyError(new Uint8Array([97])))!.message).toBe('etcdserver: duplicate key given in txn request');
    expect(toWireError(new KVLeaseNotFoundError(5n))!.message).toBe('etcdserver: requested lease not found');
  });
});
