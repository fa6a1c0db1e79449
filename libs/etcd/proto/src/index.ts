export {
  EMPTY_BYTES_DEFAULT,
  ETCD_PROTO_LOADER_OPTIONS,
  PROTO_MAX_MESSAGE_DEPTH,
  etcdGrpc,
  etcdMessageType,
  etcdPackageDefinition,
  etcdProtoRoot,
  etcdServiceDefinition,
  etcdServiceDefinitionWithRawAuthStrings,
  RAW_STRING_REQUEST_PATTERN,
  wardNodeGrpc,
  wardNodeServiceDefinition,
  wardTokenGrpc,
  wardTokenServiceDefinition,
  type EtcdServiceName,
} from './load';
// Message, enum and service types generated from etcd's protos (one named export each).
export type * from './generated/types';
export {
  _mvccpb_Event_EventType as EventType,
  _authpb_Permission_Type as PermissionType,
  _etcdserverpb_Compare_CompareResult as CompareResult,
  _etcdserverpb_Compare_CompareTarget as CompareTarget,
  _etcdserverpb_RangeRequest_SortOrder as SortOrder,
  _etcdserverpb_RangeRequest_SortTarget as SortTarget,
  _etcdserverpb_WatchCreateRequest_FilterType as WatchFilterType,
  AlarmType,
} from './generated/types';
