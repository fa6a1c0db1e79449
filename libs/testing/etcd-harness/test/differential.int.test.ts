// The differential suite. Every scripted scenario — etcdctl sessions, raw gRPC sessions, the JSON
// gateway — runs on real etcd 3.4.23 (3 members) and on ward (3 raft-nodes + gateway), from the
// same reset state. Each must do what its script says on both (for spec §8.2 steps: 3.4.23's
// old behaviour on etcd, the 3.7 behaviour on ward), and the normalised transcripts of all steps
// where 3.4.23 equals the target (§8.3) must be EQUAL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EQUAL_SCENARIOS,
  GRPC_SCENARIOS,
  jsonGateway,
  runGrpcScenario,
  runHttpScenario,
  runScenario,
  startEtcdCluster,
  startWardCluster,
  type EtcdCluster,
  type WardCluster,
} from '../src/index';

describe.sequential('etcd 3.4.23 and ward, scenario by scenario', () => {
  let etcd: EtcdCluster;
  let ward: WardCluster;
  beforeAll(async () => {
    [etcd, ward] = await Promise.all([startEtcdCluster({ members: 3, bcryptCost: 4 }), startWardCluster({ nodes: 3, bcryptCost: 4 })]);
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
});
