// @ward/testing/linearizability: a linearizability checker (WGL search with memoization,
// P-compositional partitioning, open-ended unknown outcomes, a budget that never reports ok).
export type {
  Budget,
  CheckOptions,
  CheckResult,
  CompletedOperation,
  FailedOperation,
  IllegalDetail,
  Model,
  Operation,
  OperationBase,
  PartitionReport,
  StepResult,
  UnknownOperation,
  UnknownOutput,
  UnknownReason,
  Verdict,
} from './types';
export { UNKNOWN_OUTPUT } from './types';
export type {
  InvalidHistoryReason,
  LinearizabilityErrorCode,
  ParseErrorReason,
} from './errors';
export { HistoryParseError, InvalidHistoryError, LinearizabilityError } from './errors';
export { combineHashes, hashScalar, hashString, mix32 } from './hashing';
export type { RegisterInput, RegisterOutput, RegisterState, RegisterValue } from './models/register';
export { registerModel } from './models/register';
export type { AppendKvInput, AppendKvOutput, AppendKvState } from './models/append-kv';
export { appendKvModel } from './models/append-kv';
export type { KvCompare, KvInput, KvOutput, KvState } from './models/kv';
export { kvModel } from './models/kv';
export type { SinglePartitionState } from './models/single-partition';
export { singlePartition } from './models/single-partition';
