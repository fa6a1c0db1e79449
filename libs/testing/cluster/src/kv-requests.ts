// ApplyRequests for the operations tests and benchmarks issue (no token: auth is off).
import type { ApplyRequest } from '@ward/etcd/apply';
import type { Compare } from '@ward/etcd/kv-store';

const HEADER = { id: 0n, username: '', authRevision: 0 };
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

export function putRequest(key: string, value: string | Uint8Array): ApplyRequest {
  return { header: HEADER, operation: { type: 'put', request: { key: text(key), value: typeof value === 'string' ? text(value) : value } } };
}

export function getRequest(key: string): ApplyRequest {
  return { header: HEADER, operation: { type: 'range', request: { key: text(key) } } };
}

export function deleteRequest(key: string): ApplyRequest {
  return { header: HEADER, operation: { type: 'deleteRange', request: { key: text(key) } } };
}

/** Compare-and-set: put `value` if the key holds `expected` (null: the key is absent). */
export function casRequest(key: string, expected: string | null, value: string): ApplyRequest {
  const compare: Compare =
    expected === null
      ? { target: 'VERSION', result: 'EQUAL', key: text(key), version: 0 }
      : { target: 'VALUE', result: 'EQUAL', key: text(key), value: text(expected) };
  return {
    header: HEADER,
    operation: { type: 'txn', request: { compare: [compare], success: [{ type: 'put', request: { key: text(key), value: text(value) } }], failure: [] } },
  };
}
