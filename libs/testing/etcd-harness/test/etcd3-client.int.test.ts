// The etcd3 npm client (auth, put/get, txn, watch) against real etcd 3.4.23: the transcript ward
// must reproduce.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, ROOT_PASSWORD, etcd3Session, resetTarget, startEtcdCluster, type EtcdCluster } from '../src/index';

const denied = { error: 'EtcdPermissionDeniedError', message: '7 PERMISSION_DENIED: etcdserver: permission denied' };

/** What etcd 3.4.23 shows the etcd3 client (checked live); ward must show the same. */
const EXPECTED_TRANSCRIPT = [
  ['roles of alice', ['app']],
  ['permissions of app', [{ permission: 'Readwrite', start: 'app/', end: 'app0' }]],
  ['put app/a', { ok: 'done' }],
  ['get app/a', { ok: '1' }],
  ['get prefix app/', { ok: { 'app/a': '1' } }],
  ['put other', denied],
  ['get other', denied],
  ['anonymous get', { error: 'GRPCInvalidArgumentError', message: '3 INVALID_ARGUMENT: etcdserver: user name is empty' }],
  ['wrong password get', { error: 'EtcdAuthenticationFailedError', message: '3 INVALID_ARGUMENT: etcdserver: authentication failed, invalid user ID or password' }],
  ['txn success', { ok: true }],
  ['txn failure', { ok: false }],
  ['txn touching other', denied],
  ['value after txns', { ok: '2' }],
  ['watch app/ prefix', { ok: { key: 'app/w', value: 'w1' } }],
  ['delete prefix', { ok: '2' }],
  ['get after delete', { ok: null }],
];

describe('etcd3 client on etcd 3.4.23', () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1, bcryptCost: 4 });
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  it('auth, put/get, txn and watch behave as etcd documents', async () => {
    const grpc = new EtcdGrpcClient(etcd.clientEndpoint);
    await resetTarget(grpc);
    grpc.close();
    const transcript = await etcd3Session(etcd, ROOT_PASSWORD);
    expect(transcript).toEqual(EXPECTED_TRANSCRIPT);
  });
});
