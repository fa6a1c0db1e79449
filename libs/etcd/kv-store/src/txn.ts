import { assertNever } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { comparesHold } from './compare';
import type { KeySpace } from './key-space';
import type { KeySpan } from './key-span';
import { spanContains, toKeySpan } from './key-span';
import { executeRange, resolveReadRevision } from './range-read';
import type { LeaseLookup, RequestOp, ResponseOp, TxnRequest, TxnResponse } from './types';
import type { WriteContext } from './write-context';
import { checkPut, executeDeleteRange, executePut } from './write-ops';

// etcd's server/etcdserver/txn/txn.go: decide every branch first (all compares, nested ones
// included, read the state before the txn), check the chosen operations, then execute them in
// order on one write transaction, so a txn either fails before any change or applies whole.

/** The branch a txn takes, with the plans of the nested txns on that branch (etcd's txnPath). */
export interface TxnPlan {
  readonly succeeded: boolean;
  readonly ops: readonly RequestOp[];
  /** For each op of `ops`: the nested plan when the op is a txn, else null. */
  readonly nested: readonly (TxnPlan | null)[];
}

/** etcd's compareToPath: evaluates the compares of the txn and of every nested txn taken. */
export function planTxn(space: KeySpace, request: TxnRequest, revision: number): TxnPlan {
  const succeeded = comparesHold(space, request.compare, revision);
  const ops = succeeded ? request.success : request.failure;
  const nested = ops.map((op) => (op.type === 'txn' ? planTxn(space, op.request, revision) : null));
  return { succeeded, ops, nested };
}

/**
 * etcd's checkTxn: on the branches taken, a Range must read a valid revision and a Put must pass
 * its apply-time checks, all against the state before the txn (`revision`).
 *
 * One addition: a put with ignore_value / ignore_lease after a from-key delete of the same txn
 * that removed its key. etcd's duplicate-key check lets the pair through and its apply then
 * panics on the missing previous version; here the txn fails with `key not found` before any
 * change.
 */
export function checkPlan(space: KeySpace, plan: TxnPlan, revision: number, leases: LeaseLookup): void {
  const deletes: KeySpan[] = [];
  const deletedBefore = (key: ByteString): boolean => deletes.some((span) => spanContains(span, key));
  const visit = (current: TxnPlan): void => {
    current.ops.forEach((op, i) => {
      switch (op.type) {
        case 'range':
          resolveReadRevision(space, op.request.revision ?? 0, revision);
          return;
        case 'put':
          checkPut(space, op.request, revision, leases, deletedBefore);
          return;
        case 'deleteRange':
          deletes.push(toKeySpan(op.request.key, op.request.rangeEnd));
          return;
        case 'txn':
          visit(current.nested[i]!);
          return;
        default:
          return assertNever(op, 'request op');
      }
    });
  };
  visit(plan);
}

/**
 * Executes a checked plan (etcd's executeTxn). The top-level response carries the revision
 * after the txn; nested responses carry 0, as etcd leaves their headers empty.
 */
export function executePlan(context: WriteContext, space: KeySpace, plan: TxnPlan, topLevel: boolean): TxnResponse {
  const responses: ResponseOp[] = plan.ops.map((op, i): ResponseOp => {
    switch (op.type) {
      case 'range':
        return { type: 'range', response: executeRange(space, op.request, context.readRevision) };
      case 'put':
        return { type: 'put', response: executePut(context, op.request) };
      case 'deleteRange':
        return { type: 'deleteRange', response: executeDeleteRange(context, space, op.request) };
      case 'txn':
        return { type: 'txn', response: executePlan(context, space, plan.nested[i]!, false) };
      default:
        return assertNever(op, 'request op');
    }
  });
  return { revision: topLevel ? context.readRevision : 0, succeeded: plan.succeeded, responses };
}
