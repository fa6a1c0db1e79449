import type { Scenario } from '../scenario';
import { AUTH_FAILED, DENIED, TEST_PASSWORDS, TEST_ROLE, TEST_USER, USER_EMPTY, ctl, txnInput } from './common';

/** put/get/del/txn as a user holding READWRITE on the single key `foo` (rows 32, 34, 45, 69; §3.4, §3.5). */
export const kvWithUser: Scenario = {
  name: 'put/get/del/txn with --user',
  spec: '§3.4, §3.5; rows 32, 34, 44, 45, 69',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['put', 'foo', 'bar'], { out: 'OK' }),
    ctl('test-user', ['get', 'foo'], { out: 'foo\nbar' }),
    ctl('test-user', ['get', 'foo', '-w', 'json'], {
      out: '{"header":{"cluster_id":"<cluster_id>","member_id":"<member_id>","revision":"base+1","raft_term":"<raft_term>"},"kvs":[{"key":"Zm9v","create_revision":"base+1","mod_revision":"base+1","version":1,"value":"YmFy"}],"count":1}',
    }),
    ctl('test-user', ['put', 'foo', 'baz', '--prev-kv'], { out: 'OK\nfoo\nbar' }),
    ctl('test-user', ['get', 'foo', '--print-value-only'], { out: 'baz' }),
    ctl('test-user', ['put', 'bar', 'x'], { error: DENIED }),
    ctl('test-user', ['get', 'bar'], { error: DENIED }),
    ctl('test-user', ['get', 'foo', '--prefix'], { error: DENIED }, { note: 'a single-key grant does not cover the prefix range' }),
    ctl('test-user', ['get', 'foo', 'fop'], { error: DENIED }),
    ctl('test-user', ['del', 'bar'], { error: DENIED }),
    ctl('test-user', ['del', 'foo', '--prefix'], { error: DENIED }),
    ctl('test-user', ['txn'], { out: 'SUCCESS\n\nOK' }, { stdin: txnInput(['value("foo") = "baz"'], ['put foo v2'], ['put foo v3']) }),
    ctl('test-user', ['txn'], { out: 'FAILURE\n\nOK' }, { stdin: txnInput(['value("foo") = "nope"'], ['put foo v4'], ['put foo v3']) }),
    ctl('test-user', ['txn'], { error: DENIED }, { stdin: txnInput(['value("c1") = "x"'], ['put foo v5'], []), note: 'compare outside the grant' }),
    ctl('test-user', ['txn'], { error: DENIED }, { stdin: txnInput(['value("foo") = "v3"'], ['put s1 x'], []), note: 'success op outside the grant' }),
    ctl('test-user', ['txn'], { error: DENIED }, { stdin: txnInput(['value("foo") = "v3"'], ['put foo x'], ['put f1 x']), note: 'failure branch is checked too' }),
    ctl('test-user', ['txn'], { error: DENIED }, { stdin: txnInput([], ['get bar'], []) }),
    ctl('test-user', ['txn', '-w', 'json'], {
      out: '{"header":{"cluster_id":"<cluster_id>","member_id":"<member_id>","revision":"base+4","raft_term":"<raft_term>"},"succeeded":true,"responses":[{"Response":{"ResponseRange":{"header":{"revision":"base+4"},"kvs":[{"key":"Zm9v","create_revision":"base+1","mod_revision":"base+4","version":4,"value":"djM="}],"count":1}}}]}',
    }, { stdin: txnInput(['value("foo") = "v3"'], ['get foo'], ['put foo never']) }),
    ctl('test-user', ['del', 'foo'], { out: '1' }),
    ctl('test-user', ['get', 'foo'], { out: '' }),
    ctl('test-user', ['del', 'foo'], { out: '0' }),
    ctl(undefined, ['get', 'foo'], { error: USER_EMPTY }),
    ctl('test-user', ['get', 'foo'], { error: AUTH_FAILED }, { password: 'wrong' }),
    ctl('nobody', ['get', 'foo'], { error: AUTH_FAILED }, { password: 'pass' }),
    ctl('root', ['put', '', 'x'], { error: 'etcdserver: key is not provided' }),
    ctl('root', ['put', 'bar', 'x'], { out: 'OK' }),
    ctl('root', ['get', '', '--prefix', '--keys-only'], { out: 'bar\n' }),
  ],
};
