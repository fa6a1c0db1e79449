// @ward/testing/linearizability: a linearizability checker (WGL search with memoization,
// P-compositional partitioning, open-ended unknown outcomes, a budget that never reports ok).

// Checking.
export { checkLinearizability } from './check';
export { formatCheckResult } from './format-result';
export { DEFAULT_MAX_STEPS } from './budget';
export { DEFAULT_MAX_OPERATIONS } from './validate-history';
export type {
  Budget,
  CheckOptions,
  CheckResult,
  IllegalDetail,
  PartitionReport,
  UnknownReason,
  Verdict,
} from './types';

// Histories.
export { HistoryRecorder } from './history-recorder';
export type { CompletedOperation, FailedOperation, Operation, OperationBase, UnknownOperation } from './types';

// Models.
export type { Model, StepResult, UnknownOutput } from './types';
export { UNKNOWN_OUTPUT } from './types';
export type { RegisterInput, RegisterOutput, RegisterState, RegisterValue } from './models/register';
export { registerModel } from './models/register';
export type { AppendKvInput, AppendKvOutput, AppendKvState } from './models/append-kv';
export { appendKvModel } from './models/append-kv';
export type { KvCompare, KvInput, KvOutput, KvState } from './models/kv';
export { kvModel } from './models/kv';
export type { SinglePartitionState } from './models/single-partition';
export { singlePartition } from './models/single-partition';
export { combineHashes, hashScalar, hashString, mix32 } from './hashing';

// Parsers of recorded histories.
export type { ParseLimits } from './parsers/limits';
export type { JepsenRegisterLogOptions } from './parsers/jepsen-register-log';
export { parseJepsenRegisterLog } from './parsers/jepsen-register-log';
export { parseEdnKvHistory } from './parsers/edn-kv-history';
export type { EdnKeyword, EdnValue } from './parsers/edn-map';
export { parseEdnMap } from './parsers/edn-map';

// Errors.
export type { InvalidHistoryReason, LinearizabilityErrorCode, ParseErrorReason } from './errors';
export { HistoryParseError, InvalidHistoryError, LINEARIZABILITY_ERROR_CODES, LinearizabilityError } from './errors';
