// @ward/testing/cluster: real raft-node processes on 127.0.0.1 for integration tests, the Jepsen
// style run and the benchmark (test code only).
export { RAFT_NODE_BUNDLE, WORKSPACE_ROOT, appBundlePath, buildAppBundle, buildRaftNodeBundle } from './bundle';
export { freePort, freePorts, occupiedPort, reservePorts, type HeldPort } from './free-port';
export { LocalCluster, type ClusterMember, type LinkProxy, type LocalClusterOptions, type PlannedMember } from './local-cluster';
export { MemberProcess, type MemberExit, type MemberProcessSpec } from './member-process';
export { TextTail } from './text-tail';
export { NodeApiClient, type NodeAnswer } from './node-client';
export { casRequest, deleteRequest, getRequest, putRequest } from './kv-requests';
export { createTestPki, type CertificateFiles, type TestPki } from './test-pki';
