// The differential suite. Every scripted scenario — etcdctl sessions, raw gRPC sessions, the JSON
// gateway — runs on real etcd 3.4.23 (3 members) and on ward (3 raft-nodes + gateway), from the
// same reset state. Each must do what its script says on both (for spec §8.2 steps: 3.4.23's
// old behaviour on etcd, the 3.7 behaviour on ward), and the normalised transcripts of all steps
// where 3.4.23 equals the target (§8.3) must be EQUAL. The etcd3 npm client sees the same on both.
// A second pair, both started with the same RS256 JWT key, compares the JWT revision behaviour.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EQUAL_SCENARIOS,
  EtcdGrpcClient,
  ROOT_PASSWORD,
  etcd3Session,
  resetTarget,
  GRPC_SCENARIOS,
  jsonGateway,
  jwtRevisions,
  runGrpcScenario,
  runHttpScenario,
  runScenario,
  startEtcdCluster,
  startWardCluster,
  startWardTarget,
  type EtcdCluster,
  type Target,
  type WardCluster,
} from '../src/index';
import { writeRsaKeyFiles, type JwtKeyFiles } from './support/jwt-forgery';

const denied = { error: 'EtcdPermissionDeniedError', message: '7 PERMISSION_DENIED: etcdserver: permission denied' };

/** What the etcd3 npm client observes on etcd 3.4.23 (checked live); ward must show the same. */
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

// With WARD_TARGET_ENDPOINTS set (`npm run test:compose`), ward here is the docker compose topology.
describe.sequential('etcd 3.4.23 and ward, scenario by scenario', () => {
  let etcd: EtcdCluster;
  let ward: Target;
  beforeAll(async () => {
    [etcd, ward] = await Promise.all([startEtcdCluster({ members: 3, bcryptCost: 4 }), startWardTarget({ nodes: 3, bcryptCost: 4 })]);
  });
  afterAll(async () => {
    await Promise.all([etcd?.stop(), ward?.stop()]);
  });

  for (const scenario of EQUAL_SCENARIOS) {
    it(`etcdctl: ${scenario.name} (${scenario.spec})`, async () => {
      const reference = await runScenario(etcd, scenario);
      expect(reference.failures, 'etcd 3.4.23 does not follow the script').toEqual([]);
      const candidate = await runScenario(ward, scenario);
      expect(candidate.failures, 'ward does not follow the script').toEqual([]);
      expect(candidate.records).toEqual(reference.records);
      expect(etcd.allAlive() && ward.allAlive()).toBe(true);
    });
  }

  for (const scenario of GRPC_SCENARIOS) {
    it(`gRPC: ${scenario.name} (${scenario.spec})`, async () => {
      const reference = await runGrpcScenario(etcd, scenario);
      expect(reference.failures, 'etcd 3.4.23 does not follow the script').toEqual([]);
      const candidate = await runGrpcScenario(ward, scenario);
      expect(candidate.failures, 'ward does not follow the script').toEqual([]);
      const equalSteps = (records: typeof reference.records) => records.filter((record) => !record.differs);
      const wardOnlySteps = new Set(scenario.steps.flatMap((step, index) => ('wardOnly' in step && step.wardOnly ? [index] : [])));
      expect(equalSteps(candidate.records).filter((record) => !wardOnlySteps.has(record.step))).toEqual(equalSteps(reference.records));
      expect(etcd.allAlive() && ward.allAlive()).toBe(true);
    });
  }

  it(`JSON gateway: ${jsonGateway.name} (${jsonGateway.spec})`, async () => {
    const reference = await runHttpScenario(etcd, jsonGateway);
    expect(reference.failures).toEqual([]);
    const candidate = await runHttpScenario(ward, jsonGateway);
    expect(candidate.failures).toEqual([]);
    const equalSteps = (records: typeof reference.records) => records.filter((record) => !record.differs);
    expect(equalSteps(candidate.records)).toEqual(equalSteps(reference.records));
  });

  it('the etcd3 npm client: auth, put/get, txn, watch', async () => {
    for (const target of [etcd, ward]) {
      const grpc = new EtcdGrpcClient(target.clientEndpoint);
      await resetTarget(grpc);
      grpc.close();
      expect(await etcd3Session(target, ROOT_PASSWORD), target.kind).toEqual(EXPECTED_TRANSCRIPT);
    }
  });
});

describe.sequential('JWT tokens: etcd 3.4.23 and ward started with the same RS256 key', () => {
  let etcd: EtcdCluster;
  let ward: WardCluster;
  let keys: JwtKeyFiles;
  beforeAll(async () => {
    keys = await writeRsaKeyFiles();
    const option = `jwt,pub-key=${keys.publicKeyPath},priv-key=${keys.privateKeyPath},sign-method=RS256,ttl=10m`;
    [etcd, ward] = await Promise.all([
      startEtcdCluster({ members: 1, bcryptCost: 4, authToken: option }),
      startWardCluster({ nodes: 3, bcryptCost: 4, authToken: option }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([etcd?.stop(), ward?.stop()]);
    if (keys) await rm(keys.dir, { recursive: true, force: true });
  });

  it(`gRPC: ${jwtRevisions.name} (${jwtRevisions.spec})`, async () => {
    const reference = await runGrpcScenario(etcd, jwtRevisions);
    expect(reference.failures, 'etcd 3.4.23 does not follow the script').toEqual([]);
    const candidate = await runGrpcScenario(ward, jwtRevisions);
    expect(candidate.failures, 'ward does not follow the script').toEqual([]);
    expect(candidate.records).toEqual(reference.records);
  });
});
