import type { ByteString } from './byte-string';
import { fromByteString, toByteString } from './byte-string';
import { DeleteSpans } from './delete-spans';
import {
  KVDuplicateKeyError,
  KVEmptyKeyError,
  KVInvalidSortOptionError,
  KVKeyNotFoundError,
  KVLeaseProvidedError,
  KVTooManyOpsError,
  KVValueProvidedError,
} from './errors';
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from './types';
import { NO_LEASE } from './types';

// The request checks etcd makes in its gRPC handler before proposing (api/v3rpc/key.go). They
// depend on the request alone, so the gateway can run them early and every replica gets the same
// answer again at apply.

const SORT_ORDERS: ReadonlySet<string> = new Set(['NONE', 'ASCEND', 'DESCEND']);
const SORT_TARGETS: ReadonlySet<string> = new Set(['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE']);
const COMPARE_RESULTS: ReadonlySet<string> = new Set(['EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL']);

/**
 * Deepest txn nesting accepted, counting the outer TxnRequest as level 1: the one bound every part
 * of ward holds a txn to (the gateway before decoding and before proposing, the log entry codec,
 * the apply-time validation), and the depth whose responses are known to encode (every etcd
 * message nests 2 levels a txn level; the protobuf codecs are sized for this bound). etcd 3.4.23
 * with its default --max-txn-ops (128) accepts exactly 128 levels and refuses 129 or more with
 * `too many operations in txn request` (its per-level budget runs out; it decodes any depth), so
 * with the default limits this bound is never the first to refuse; with a larger maxTxnOps it
 * refuses the same way.
 */
export const MAX_TXN_NESTING_DEPTH = 128;

/** Limits of one txn (KVStoreOptions.maxTxnOps / maxTxnOpsTotal). */
export interface TxnLimits {
  readonly maxTxnOps: number;
  readonly maxTxnOpsTotal: number;
}

/**
 * Numbers arrive as etcd int64 values converted by the caller: any integral number is fine (a
 * revision beyond 2^53 simply is a future revision); NaN, infinities and fractions are caller bugs.
 */
function checkInteger(value: number | undefined, field: string): void {
  if (value !== undefined && !Number.isInteger(value)) throw new TypeError(`${field} must be an integer, got ${value}`);
}

function checkRequiredInteger(value: number, field: string): void {
  if (!Number.isInteger(value)) throw new TypeError(`${field} must be an integer, got ${value}`);
}

function checkLeaseId(value: unknown, field: string): void {
  if (value !== undefined && typeof value !== 'bigint') throw new TypeError(`${field} must be a bigint lease ID`);
}

/** etcd's checkRangeRequest: a key, and sort options inside their enums. */
export function validateRangeRequest(request: RangeRequest): void {
  if (request.key.length === 0) throw new KVEmptyKeyError();
  checkInteger(request.limit, 'RangeRequest.limit');
  checkInteger(request.revision, 'RangeRequest.revision');
  checkInteger(request.minModRevision, 'RangeRequest.minModRevision');
  checkInteger(request.maxModRevision, 'RangeRequest.maxModRevision');
  checkInteger(request.minCreateRevision, 'RangeRequest.minCreateRevision');
  checkInteger(request.maxCreateRevision, 'RangeRequest.maxCreateRevision');
  if (request.sortOrder !== undefined && !SORT_ORDERS.has(request.sortOrder)) {
    throw new KVInvalidSortOptionError('sortOrder');
  }
  if (request.sortTarget !== undefined && !SORT_TARGETS.has(request.sortTarget)) {
    throw new KVInvalidSortOptionError('sortTarget');
  }
}

/** etcd's checkPutRequest: a key; no value with ignore_value; no lease with ignore_lease. */
export function validatePutRequest(request: PutRequest): void {
  if (request.key.length === 0) throw new KVEmptyKeyError();
  checkLeaseId(request.lease, 'PutRequest.lease');
  if (request.ignoreValue === true && request.value !== undefined && request.value.length !== 0) {
    throw new KVValueProvidedError();
  }
  if (request.ignoreLease === true && request.lease !== undefined && request.lease !== NO_LEASE) {
    throw new KVLeaseProvidedError();
  }
}

/** etcd's checkDeleteRequest: a key. */
export function validateDeleteRangeRequest(request: DeleteRangeRequest): void {
  if (request.key.length === 0) throw new KVEmptyKeyError();
}

/**
 * etcd's Txn checks: checkTxnRequest (per level at most `maxTxnOps` compares, success ops and
 * failure ops, a nested txn getting the budget left by its parent; keys present; every operation
 * valid) then checkIntervals on each branch (no key put twice, no key both put and deleted).
 * Before them, the total operation count and nesting depth are bounded (ward's limit).
 */
export function validateTxnRequest(request: TxnRequest, limits: TxnLimits): void {
  checkTxnSize(request, limits.maxTxnOpsTotal);
  checkTxnRequest(request, limits.maxTxnOps);
  checkIntervals(request.success);
  checkIntervals(request.failure);
}

/** Counts compares and operations over every level without recursion, failing fast. */
function checkTxnSize(request: TxnRequest, maxTotal: number): void {
  const pending: { txn: TxnRequest; depth: number }[] = [{ txn: request, depth: 1 }];
  let total = 0;
  while (pending.length > 0) {
    const { txn, depth } = pending.pop()!;
    if (depth > MAX_TXN_NESTING_DEPTH) throw new KVTooManyOpsError(total, maxTotal);
    total += txn.compare.length + txn.success.length + txn.failure.length;
    if (total > maxTotal) throw new KVTooManyOpsError(total, maxTotal);
    for (const op of txn.success) if (op.type === 'txn') pending.push({ txn: op.request, depth: depth + 1 });
    for (const op of txn.failure) if (op.type === 'txn') pending.push({ txn: op.request, depth: depth + 1 });
  }
}

function checkTxnRequest(request: TxnRequest, maxTxnOps: number): void {
  const operations = Math.max(request.compare.length, request.success.length, request.failure.length);
  if (operations > maxTxnOps) throw new KVTooManyOpsError(operations, maxTxnOps);
  for (const compare of request.compare) {
    if (compare.key.length === 0) throw new KVEmptyKeyError();
    checkCompareOperand(compare);
  }
  for (const op of request.success) checkRequestOp(op, maxTxnOps - operations);
  for (const op of request.failure) checkRequestOp(op, maxTxnOps - operations);
}

/** The operand matches the target (the union allows nothing else; untyped callers get a TypeError). */
function checkCompareOperand(compare: Compare): void {
  if (!COMPARE_RESULTS.has(compare.result)) {
    throw new TypeError(`Compare.result ${String(compare.result)} is not an etcd compare result`);
  }
  switch (compare.target) {
    case 'VERSION':
      return checkRequiredInteger(compare.version, 'Compare.version');
    case 'CREATE':
      return checkRequiredInteger(compare.createRevision, 'Compare.createRevision');
    case 'MOD':
      return checkRequiredInteger(compare.modRevision, 'Compare.modRevision');
    case 'VALUE':
      if (!(compare.value instanceof Uint8Array)) throw new TypeError('Compare.value must be a Uint8Array');
      return;
    case 'LEASE':
      if (typeof compare.lease !== 'bigint') throw new TypeError('Compare.lease must be a bigint lease ID');
      return;
    default:
      throw new TypeError(`Compare.target ${String((compare as { target: unknown }).target)} is not an etcd compare target`);
  }
}

function checkRequestOp(op: RequestOp, maxTxnOps: number): void {
  switch (op.type) {
    case 'range':
      return validateRangeRequest(op.request);
    case 'put':
      return validatePutRequest(op.request);
    case 'deleteRange':
      return validateDeleteRangeRequest(op.request);
    case 'txn':
      return checkTxnRequest(op.request, maxTxnOps);
    default:
      // etcd answers an operation with no request set this way (checkRequestOp's default).
      throw new KVKeyNotFoundError('empty-request-op');
  }
}

interface BranchWrites {
  readonly puts: Set<ByteString>;
  readonly deletes: DeleteSpans;
}

/**
 * etcd's checkIntervals over one branch: this level's deletes first; then each nested txn's
 * puts (its success and failure branches may put the same key, they never both run) must not
 * repeat a put or fall in a delete seen so far, and its deletes join; last this level's puts.
 */
function checkIntervals(ops: readonly RequestOp[]): BranchWrites {
  const deletes = new DeleteSpans();
  for (const op of ops) {
    if (op.type !== 'deleteRange') continue;
    const rangeEnd = op.request.rangeEnd;
    deletes.addDelete(toByteString(op.request.key), rangeEnd === undefined ? '' : toByteString(rangeEnd));
  }
  const puts = new Set<ByteString>();
  for (const op of ops) {
    if (op.type !== 'txn') continue;
    const then = checkIntervals(op.request.success);
    const otherwise = checkIntervals(op.request.failure);
    for (const key of then.puts) {
      if (puts.has(key) || deletes.holds(key)) throw duplicate(key);
      puts.add(key);
    }
    for (const key of otherwise.puts) {
      if (puts.has(key) && !then.puts.has(key)) throw duplicate(key);
      if (deletes.holds(key)) throw duplicate(key);
      puts.add(key);
    }
    deletes.addAll(then.deletes);
    deletes.addAll(otherwise.deletes);
  }
  for (const op of ops) {
    if (op.type !== 'put') continue;
    const key = toByteString(op.request.key);
    if (puts.has(key) || deletes.holds(key)) throw duplicate(key);
    puts.add(key);
  }
  return { puts, deletes };
}

function duplicate(key: ByteString): KVDuplicateKeyError {
  return new KVDuplicateKeyError(fromByteString(key));
}

/** etcd's IsTxnReadonly: every operation of both branches (top level) is a Range. */
export function isTxnReadOnly(request: TxnRequest): boolean {
  for (const op of request.success) if (op.type !== 'range') return false;
  for (const op of request.failure) if (op.type !== 'range') return false;
  return true;
}
