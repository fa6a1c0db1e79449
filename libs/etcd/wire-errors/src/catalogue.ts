// Every etcd server error ward can return: gRPC status code + exact message text.
//
// etcd clients match on the text (clientv3's rpctypes maps messages back to errors), so the text is
// part of the protocol: change nothing here without a matching etcd release. Source of the facts:
// etcd's api/v3rpc/rpctypes (server errors, main branch = 3.7 semantics) and the unmapped auth
// errors that etcd sends with code Unknown (spec/etcd-auth.md §2.0).
import { GrpcStatus, type GrpcStatusCode } from './grpc-status';

export interface WireErrorSpec {
  readonly code: GrpcStatusCode;
  readonly message: string;
}

const S = GrpcStatus;

export const WIRE_ERRORS = {
  // Request validation and the key space (KV, Txn, Compact).
  EmptyKey: { code: S.INVALID_ARGUMENT, message: 'etcdserver: key is not provided' },
  KeyNotFound: { code: S.INVALID_ARGUMENT, message: 'etcdserver: key not found' },
  ValueProvided: { code: S.INVALID_ARGUMENT, message: 'etcdserver: value is provided' },
  LeaseProvided: { code: S.INVALID_ARGUMENT, message: 'etcdserver: lease is provided' },
  TooManyOps: { code: S.INVALID_ARGUMENT, message: 'etcdserver: too many operations in txn request' },
  DuplicateKey: { code: S.INVALID_ARGUMENT, message: 'etcdserver: duplicate key given in txn request' },
  InvalidClientAPIVersion: { code: S.INVALID_ARGUMENT, message: 'etcdserver: invalid client api version' },
  InvalidSortOption: { code: S.INVALID_ARGUMENT, message: 'etcdserver: invalid sort option' },
  Compacted: { code: S.OUT_OF_RANGE, message: 'etcdserver: mvcc: required revision has been compacted' },
  FutureRev: { code: S.OUT_OF_RANGE, message: 'etcdserver: mvcc: required revision is a future revision' },
  NoSpace: { code: S.RESOURCE_EXHAUSTED, message: 'etcdserver: mvcc: database space exceeded' },

  // Leases.
  LeaseNotFound: { code: S.NOT_FOUND, message: 'etcdserver: requested lease not found' },
  LeaseExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: lease already exists' },
  LeaseTTLTooLarge: { code: S.OUT_OF_RANGE, message: 'etcdserver: too large lease TTL' },

  // Watch.
  WatchCanceled: { code: S.CANCELLED, message: 'etcdserver: watch canceled' },

  // Cluster membership.
  MemberExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: member ID already exist' },
  PeerURLExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: Peer URLs already exists' },
  MemberNotEnoughStarted: {
    code: S.FAILED_PRECONDITION,
    message: 'etcdserver: re-configuration failed due to not enough started members',
  },
  MemberBadURLs: { code: S.INVALID_ARGUMENT, message: 'etcdserver: given member URLs are invalid' },
  MemberNotFound: { code: S.NOT_FOUND, message: 'etcdserver: member not found' },
  MemberNotLearner: { code: S.FAILED_PRECONDITION, message: 'etcdserver: can only promote a learner member' },
  LearnerNotReady: {
    code: S.FAILED_PRECONDITION,
    message: 'etcdserver: can only promote a learner member which is in sync with leader',
  },
  TooManyLearners: { code: S.FAILED_PRECONDITION, message: 'etcdserver: too many learner members in cluster' },
  ClusterIDMismatch: { code: S.FAILED_PRECONDITION, message: 'etcdserver: cluster ID mismatch' },

  // Request size and rate.
  RequestTooLarge: { code: S.INVALID_ARGUMENT, message: 'etcdserver: request is too large' },
  TooManyRequests: { code: S.RESOURCE_EXHAUSTED, message: 'etcdserver: too many requests' },

  // Authentication and authorization (spec/etcd-auth.md §2.0).
  RootUserNotExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: root user does not exist' },
  RootRoleNotExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: root user does not have root role' },
  UserAlreadyExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: user name already exists' },
  UserEmpty: { code: S.INVALID_ARGUMENT, message: 'etcdserver: user name is empty' },
  UserNotFound: { code: S.FAILED_PRECONDITION, message: 'etcdserver: user name not found' },
  RoleAlreadyExist: { code: S.FAILED_PRECONDITION, message: 'etcdserver: role name already exists' },
  RoleNotFound: { code: S.FAILED_PRECONDITION, message: 'etcdserver: role name not found' },
  RoleEmpty: { code: S.INVALID_ARGUMENT, message: 'etcdserver: role name is empty' },
  AuthFailed: { code: S.INVALID_ARGUMENT, message: 'etcdserver: authentication failed, invalid user ID or password' },
  PermissionNotGiven: { code: S.INVALID_ARGUMENT, message: 'etcdserver: permission not given' },
  PermissionDenied: { code: S.PERMISSION_DENIED, message: 'etcdserver: permission denied' },
  RoleNotGranted: { code: S.FAILED_PRECONDITION, message: 'etcdserver: role is not granted to the user' },
  PermissionNotGranted: { code: S.FAILED_PRECONDITION, message: 'etcdserver: permission is not granted to the role' },
  AuthNotEnabled: { code: S.FAILED_PRECONDITION, message: 'etcdserver: authentication is not enabled' },
  InvalidAuthToken: { code: S.UNAUTHENTICATED, message: 'etcdserver: invalid auth token' },
  InvalidAuthMgmt: { code: S.INVALID_ARGUMENT, message: 'etcdserver: invalid auth management' },
  AuthOldRevision: { code: S.INVALID_ARGUMENT, message: 'etcdserver: revision of auth store is old' },
  // etcd leaves these auth errors out of its gRPC error map: they reach clients as Unknown with the
  // auth package's own text (verified against etcd 3.4.23, spec/etcd-auth.md §2.0).
  NoPasswordUser: { code: S.UNKNOWN, message: 'auth: authentication failed, password was given for no password user' },
  VerifyOnly: { code: S.UNKNOWN, message: 'auth: token signing attempted with verify-only key' },
  PasswordTooLong: { code: S.UNKNOWN, message: 'bcrypt: password length exceeds 72 bytes' },
  // ward's own refusals of user and role names, with no etcd counterpart (etcd stores any bytes as
  // a name; 3.4.23 crashes on a name over 32 KiB, bbolt's key limit). ward keeps names valid UTF-8
  // (they travel as JSON strings in JWTs, logs and the JSON gateway) and at most
  // DEFAULT_AUTH_LIMITS.maxNameBytes (64 KiB) long.
  UserNameNotUtf8: { code: S.INVALID_ARGUMENT, message: 'etcdserver: user name is not valid UTF-8' },
  RoleNameNotUtf8: { code: S.INVALID_ARGUMENT, message: 'etcdserver: role name is not valid UTF-8' },
  UserNameTooLong: { code: S.INVALID_ARGUMENT, message: 'etcdserver: user name is too long' },
  RoleNameTooLong: { code: S.INVALID_ARGUMENT, message: 'etcdserver: role name is too long' },
  // ward's directory of token-signing public keys (no etcd counterpart: etcd's keys are files).
  SigningKeyInvalid: { code: S.INVALID_ARGUMENT, message: 'ward: invalid token signing key' },
  SigningKeyConflict: { code: S.FAILED_PRECONDITION, message: 'ward: token signing key id already in use' },
  SigningKeyRevoked: { code: S.FAILED_PRECONDITION, message: 'ward: token signing key was revoked' },
  SigningKeyNotFound: { code: S.NOT_FOUND, message: 'ward: token signing key not found' },

  // Leadership, availability and timeouts.
  NoLeader: { code: S.UNAVAILABLE, message: 'etcdserver: no leader' },
  NotLeader: { code: S.FAILED_PRECONDITION, message: 'etcdserver: not leader' },
  LeaderChanged: { code: S.UNAVAILABLE, message: 'etcdserver: leader changed' },
  NotCapable: { code: S.FAILED_PRECONDITION, message: 'etcdserver: not capable' },
  Stopped: { code: S.UNAVAILABLE, message: 'etcdserver: server stopped' },
  Timeout: { code: S.UNAVAILABLE, message: 'etcdserver: request timed out' },
  TimeoutDueToLeaderFail: {
    code: S.UNAVAILABLE,
    message: 'etcdserver: request timed out, possibly due to previous leader failure',
  },
  TimeoutDueToConnectionLost: {
    code: S.UNAVAILABLE,
    message: 'etcdserver: request timed out, possibly due to connection lost',
  },
  TimeoutWaitAppliedIndex: {
    code: S.UNAVAILABLE,
    message: 'etcdserver: request timed out, waiting for the applied index took too long',
  },
  Unhealthy: { code: S.UNAVAILABLE, message: 'etcdserver: unhealthy cluster' },
  Corrupt: { code: S.DATA_LOSS, message: 'etcdserver: corrupt cluster' },
  NotSupportedForLearner: { code: S.FAILED_PRECONDITION, message: 'etcdserver: rpc not supported for learner' },
  BadLeaderTransferee: { code: S.FAILED_PRECONDITION, message: 'etcdserver: bad leader transferee' },
  TimeoutLeaderTransfer: { code: S.UNAVAILABLE, message: 'etcdserver: request timed out, leader transfer took too long' },

  // Downgrades.
  WrongDowngradeVersionFormat: { code: S.INVALID_ARGUMENT, message: 'etcdserver: wrong downgrade target version format' },
  InvalidDowngradeTargetVersion: { code: S.INVALID_ARGUMENT, message: 'etcdserver: invalid downgrade target version' },
  ClusterVersionUnavailable: {
    code: S.FAILED_PRECONDITION,
    message: 'etcdserver: cluster version not found during downgrade',
  },
  DowngradeInProcess: { code: S.FAILED_PRECONDITION, message: 'etcdserver: cluster has a downgrade job in progress' },
  NoInflightDowngrade: { code: S.FAILED_PRECONDITION, message: 'etcdserver: no inflight downgrade job' },

  // Cancellation.
  Canceled: { code: S.CANCELLED, message: 'etcdserver: request canceled' },
  DeadlineExceeded: { code: S.DEADLINE_EXCEEDED, message: 'etcdserver: context deadline exceeded' },
} as const satisfies Record<string, WireErrorSpec>;

export type WireErrorName = keyof typeof WIRE_ERRORS;

export const WIRE_ERROR_NAMES: readonly WireErrorName[] = Object.freeze(Object.keys(WIRE_ERRORS) as WireErrorName[]);
