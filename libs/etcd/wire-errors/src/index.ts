export { WIRE_ERRORS, WIRE_ERROR_NAMES, type WireErrorName, type WireErrorSpec } from './catalogue';
export { GrpcStatus, goCodeName, httpStatusOf, isGrpcStatusCode, type GrpcStatusCode } from './grpc-status';
export { EtcdWireError, goStatusString, isWireError, wireError, wireErrorNameByMessage } from './wire-error';
