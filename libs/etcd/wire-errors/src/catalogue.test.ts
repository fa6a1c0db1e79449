// One assertion per catalogue entry: gRPC code (by Go name, so the number table is checked too)
// and the exact text etcd sends. The expected table is written out independently of the catalogue.
import { describe, expect, it } from 'vitest';
import {
  EtcdWireError,
  WIRE_ERRORS,
  WIRE_ERROR_NAMES,
  goCodeName,
  goStatusString,
  httpStatusOf,
  isWireError,
  wireError,
  wireErrorNameByMessage,
  type WireErrorName,
} from './index';

const EXPECTED: ReadonlyArray<readonly [WireErrorName, string, string]> = [
  ['EmptyKey', 'InvalidArgument', 'etcdserver: key is not provided'],
  ['KeyNotFound', 'InvalidArgument', 'etcdserver: key not found'],
  ['ValueProvided', 'InvalidArgument', 'etcdserver: value is provided'],
  ['LeaseProvided', 'InvalidArgument', 'etcdserver: lease is provided'],
  ['TooManyOps', 'InvalidArgument', 'etcdserver: too many operations in txn request'],
  ['DuplicateKey', 'InvalidArgument', 'etcdserver: duplicate key given in txn request'],
  ['InvalidClientAPIVersion', 'InvalidArgument', 'etcdserver: invalid client api version'],
  ['InvalidSortOption', 'InvalidArgument', 'etcdserver: invalid sort option'],
  ['Compacted', 'OutOfRange', 'etcdserver: mvcc: required revision has been compacted'],
  ['FutureRev', 'OutOfRange', 'etcdserver: mvcc: required revision is a future revision'],
  ['NoSpace', 'ResourceExhausted', 'etcdserver: mvcc: database space exceeded'],
  ['LeaseNotFound', 'NotFound', 'etcdserver: requested lease not found'],
  ['LeaseExist', 'FailedPrecondition', 'etcdserver: lease already exists'],
  ['LeaseTTLTooLarge', 'OutOfRange', 'etcdserver: too large lease TTL'],
  ['WatchCanceled', 'Canceled', 'etcdserver: watch canceled'],
  ['MemberExist', 'FailedPrecondition', 'etcdserver: member ID already exist'],
  ['PeerURLExist', 'FailedPrecondition', 'etcdserver: Peer URLs already exists'],
  ['MemberNotEnoughStarted', 'FailedPrecondition', 'etcdserver: re-configuration failed due to not enough started members'],
  ['MemberBadURLs', 'InvalidArgument', 'etcdserver: given member URLs are invalid'],
  ['MemberNotFound', 'NotFound', 'etcdserver: member not found'],
  ['MemberNotLearner', 'FailedPrecondition', 'etcdserver: can only promote a learner member'],
  ['LearnerNotReady', 'FailedPrecondition', 'etcdserver: can only promote a learner member which is in sync with leader'],
  ['TooManyLearners', 'FailedPrecondition', 'etcdserver: too many learner members in cluster'],
  ['ClusterIDMismatch', 'FailedPrecondition', 'etcdserver: cluster ID mismatch'],
  ['RequestTooLarge', 'InvalidArgument', 'etcdserver: request is too large'],
  ['TooManyRequests', 'ResourceExhausted', 'etcdserver: too many requests'],
  ['SigningKeyInvalid', 'InvalidArgument', 'ward: invalid token signing key'],
  ['SigningKeyConflict', 'FailedPrecondition', 'ward: token signing key id already in use'],
  ['SigningKeyRevoked', 'FailedPrecondition', 'ward: token signing key was revoked'],
  ['SigningKeyNotFound', 'NotFound', 'ward: token signing key not found'],
  ['RootUserNotExist', 'FailedPrecondition', 'etcdserver: root user does not exist'],
  ['RootRoleNotExist', 'FailedPrecondition', 'etcdserver: root user does not have root role'],
  ['UserAlreadyExist', 'FailedPrecondition', 'etcdserver: user name already exists'],
  ['UserEmpty', 'InvalidArgument', 'etcdserver: user name is empty'],
  ['UserNotFound', 'FailedPrecondition', 'etcdserver: user name not found'],
  ['RoleAlreadyExist', 'FailedPrecondition', 'etcdserver: role name already exists'],
  ['RoleNotFound', 'FailedPrecondition', 'etcdserver: role name not found'],
  ['RoleEmpty', 'InvalidArgument', 'etcdserver: role name is empty'],
  ['AuthFailed', 'InvalidArgument', 'etcdserver: authentication failed, invalid user ID or password'],
  ['PermissionNotGiven', 'InvalidArgument', 'etcdserver: permission not given'],
  ['PermissionDenied', 'PermissionDenied', 'etcdserver: permission denied'],
  ['RoleNotGranted', 'FailedPrecondition', 'etcdserver: role is not granted to the user'],
  ['PermissionNotGranted', 'FailedPrecondition', 'etcdserver: permission is not granted to the role'],
  ['AuthNotEnabled', 'FailedPrecondition', 'etcdserver: authentication is not enabled'],
  ['InvalidAuthToken', 'Unauthenticated', 'etcdserver: invalid auth token'],
  ['InvalidAuthMgmt', 'InvalidArgument', 'etcdserver: invalid auth management'],
  ['AuthOldRevision', 'InvalidArgument', 'etcdserver: revision of auth store is old'],
  ['NoPasswordUser', 'Unknown', 'auth: authentication failed, password was given for no password user'],
  ['VerifyOnly', 'Unknown', 'auth: token signing attempted with verify-only key'],
  ['PasswordTooLong', 'Unknown', 'bcrypt: password length exceeds 72 bytes'],
  ['UserNameNotUtf8', 'InvalidArgument', 'etcdserver: user name is not valid UTF-8'],
  ['RoleNameNotUtf8', 'InvalidArgument', 'etcdserver: role name is not valid UTF-8'],
  ['UserNameTooLong', 'InvalidArgument', 'etcdserver: user name is too long'],
  ['RoleNameTooLong', 'InvalidArgument', 'etcdserver: role name is too long'],
  ['NoLeader', 'Unavailable', 'etcdserver: no leader'],
  ['NotLeader', 'FailedPrecondition', 'etcdserver: not leader'],
  ['LeaderChanged', 'Unavailable', 'etcdserver: leader changed'],
  ['NotCapable', 'FailedPrecondition', 'etcdserver: not capable'],
  ['Stopped', 'Unavailable', 'etcdserver: server stopped'],
  ['Timeout', 'Unavailable', 'etcdserver: request timed out'],
  ['TimeoutDueToLeaderFail', 'Unavailable', 'etcdserver: request timed out, possibly due to previous leader failure'],
  ['TimeoutDueToConnectionLost', 'Unavailable', 'etcdserver: request timed out, possibly due to connection lost'],
  ['TimeoutWaitAppliedIndex', 'Unavailable', 'etcdserver: request timed out, waiting for the applied index took too long'],
  ['Unhealthy', 'Unavailable', 'etcdserver: unhealthy cluster'],
  ['Corrupt', 'DataLoss', 'etcdserver: corrupt cluster'],
  ['NotSupportedForLearner', 'FailedPrecondition', 'etcdserver: rpc not supported for learner'],
  ['BadLeaderTransferee', 'FailedPrecondition', 'etcdserver: bad leader transferee'],
  ['TimeoutLeaderTransfer', 'Unavailable', 'etcdserver: request timed out, leader transfer took too long'],
  ['WrongDowngradeVersionFormat', 'InvalidArgument', 'etcdserver: wrong downgrade target version format'],
  ['InvalidDowngradeTargetVersion', 'InvalidArgument', 'etcdserver: invalid downgrade target version'],
  ['ClusterVersionUnavailable', 'FailedPrecondition', 'etcdserver: cluster version not found during downgrade'],
  ['DowngradeInProcess', 'FailedPrecondition', 'etcdserver: cluster has a downgrade job in progress'],
  ['NoInflightDowngrade', 'FailedPrecondition', 'etcdserver: no inflight downgrade job'],
  ['Canceled', 'Canceled', 'etcdserver: request canceled'],
  ['DeadlineExceeded', 'DeadlineExceeded', 'etcdserver: context deadline exceeded'],
];

describe('wire error catalogue', () => {
  it.each(EXPECTED)('%s is %s with its exact etcd text', (name, codeName, text) => {
    const error = wireError(name);
    expect(goCodeName(error.grpcCode)).toBe(codeName);
    expect(error.message).toBe(text);
    expect(WIRE_ERRORS[name]).toEqual({ code: error.grpcCode, message: text });
  });

  it('has an expectation for every entry and no entry without one', () => {
    expect(new Set(EXPECTED.map(([name]) => name))).toEqual(new Set(WIRE_ERROR_NAMES));
    expect(WIRE_ERROR_NAMES.length).toBeGreaterThanOrEqual(30);
  });

  it('maps every text back to exactly one error (texts are unique, as clients require)', () => {
    for (const name of WIRE_ERROR_NAMES) expect(wireErrorNameByMessage(WIRE_ERRORS[name].message)).toBe(name);
    expect(wireErrorNameByMessage('etcdserver: something else')).toBeUndefined();
  });
});

describe('EtcdWireError', () => {
  it('is a coded error that names itself and keeps its cause', () => {
    const cause = new Error('inner detail');
    const error = wireError('Compacted', { cause });
    expect(error).toBeInstanceOf(EtcdWireError);
    expect(error.code).toBe('ERR_ETCD_WIRE');
    expect(error.wireName).toBe('Compacted');
    expect(error.cause).toBe(cause);
    expect(error.message).not.toContain('inner detail');
    expect(isWireError(error, 'Compacted')).toBe(true);
    expect(isWireError(error, 'FutureRev')).toBe(false);
    expect(isWireError(new Error('etcdserver: mvcc: required revision has been compacted'))).toBe(false);
  });

  it('rejects names that are not in the catalogue', () => {
    expect(() => wireError('NoSuchError' as WireErrorName)).toThrow(TypeError);
  });

  it('formats Go status strings the way etcd puts them into watch cancel reasons', () => {
    expect(goStatusString('PermissionDenied')).toBe('rpc error: code = PermissionDenied desc = etcdserver: permission denied');
    expect(goStatusString('InvalidAuthToken')).toBe('rpc error: code = Unauthenticated desc = etcdserver: invalid auth token');
    expect(goStatusString('AuthOldRevision')).toBe('rpc error: code = InvalidArgument desc = etcdserver: revision of auth store is old');
  });

  it('maps gRPC codes to the JSON gateway HTTP statuses', () => {
    expect(httpStatusOf(wireError('PermissionDenied').grpcCode)).toBe(403);
    expect(httpStatusOf(wireError('InvalidAuthToken').grpcCode)).toBe(401);
    expect(httpStatusOf(wireError('EmptyKey').grpcCode)).toBe(400);
    expect(httpStatusOf(wireError('NoLeader').grpcCode)).toBe(503);
    expect(httpStatusOf(wireError('LeaseNotFound').grpcCode)).toBe(404);
    expect(httpStatusOf(wireError('TooManyRequests').grpcCode)).toBe(429);
  });
});
