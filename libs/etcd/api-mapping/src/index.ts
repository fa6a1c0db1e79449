// @ward/etcd/api-mapping: the one place etcd's proto objects (as grpc-js decodes them with the
// workspace's loader options) and ward's domain types meet, with etcd's API-layer validations.

// Requests: KV (validated as etcd's v3rpc key.go does).
export {
  compactionRequestFromProto,
  compactionRequestToProto,
  deleteRangeRequestFromProto,
  deleteRangeRequestToProto,
  putRequestFromProto,
  putRequestToProto,
  rangeRequestFromProto,
  rangeRequestToProto,
  txnRequestFromProto,
  txnRequestToProto,
} from './kv-request';
export { DEFAULT_KV_REQUEST_LIMITS, type KvRequestLimits } from './kv-validate';
export { guardTxnNesting, txnRequestBytesTooDeep } from './txn-nesting';
export { leaseGrantOperation, leaseRevokeOperation } from './lease';
export {
  authDisableOperation,
  authEnableOperation,
  authOperationToProto,
  authStatusOperation,
  authenticateOperation,
  permissionFromProto,
  permissionToProto,
  permissionTypeName,
  roleAddOperation,
  roleDeleteOperation,
  roleGetOperation,
  roleGrantPermissionOperation,
  roleListOperation,
  roleRevokePermissionOperation,
  userAddOperation,
  userChangePasswordOperation,
  userDeleteOperation,
  userGetOperation,
  userGrantRoleOperation,
  userListOperation,
  userRevokeRoleOperation,
} from './auth-request';
export { DEFAULT_MAX_REQUEST_BYTES, GRPC_OVERHEAD_BYTES, checkRequestSize, encodeProposal } from './request-size';

// Responses.
export { nestedHeaderToProto, responseHeaderFromProto, responseHeaderToProto, type ResponseContext, type ResponseHeaderFields } from './header';
export {
  compactionResponseFromProto,
  compactionResponseToProto,
  deleteRangeResponseFromProto,
  deleteRangeResponseToProto,
  keyValueFromProto,
  keyValueToProto,
  putResponseFromProto,
  putResponseToProto,
  rangeResponseFromProto,
  rangeResponseToProto,
  txnResponseFromProto,
  txnResponseToProto,
} from './kv-response';
export {
  RESPONSE_MESSAGE_TYPES,
  applyResponseFromProto,
  applyResponseToProto,
  decodeApplyResponse,
  encodeApplyResponse,
  hasEtcdResponse,
  type EtcdResponse,
  type RespondingOperationType,
} from './apply-response';

// Watch.
export {
  AUTO_WATCH_ID,
  INVALID_WATCH_ID,
  WATCH_CANCEL_REASONS,
  watchEventFromProto,
  watchEventToProto,
  watchRequestFromProto,
  watchRequestToProto,
  watchResponseFromProto,
  watchResponseToProto,
  type WatchCommand,
  type WatchCreateRequest,
  type WatchEventFields,
  type WatchResponse,
} from './watch';
export { fragmentWatchResponse } from './watch-fragment';

// Encodings.
export {
  COMPARE_RESULT_NAMES,
  COMPARE_TARGET_NAMES,
  EVENT_TYPE_NAMES,
  PERMISSION_TYPE_NAMES,
  SORT_ORDER_NAMES,
  SORT_TARGET_NAMES,
  WATCH_FILTER_NAMES,
  enumFromProto,
  enumNumber,
  enumToProto,
  type EnumTable,
  type PermissionTypeName,
  type WatchFilter,
} from './enum-names';
export { int64ToBigInt, int64ToNumber, toInt64String, uint64ToBigInt, uint64ToNumber, type Int64Input } from './int64';
export { bytesFromProto, bytesToProto } from './bytes-field';
export { decodeEtcdMessage, encodeEtcdMessage } from './proto-codec';

// Errors.
export { API_MAPPING_ERROR_CODES, ApiMappingError, type ApiMappingErrorCode } from './errors';
