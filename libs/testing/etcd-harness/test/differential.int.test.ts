// The differential suite, reference side: every scripted scenario (etcdctl sessions and raw gRPC
// sessions) must do exactly what its script says on real etcd 3.4.23 with 3 members — for §8.2
// steps, the 3.4.23 behaviour the spec recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EQUAL_SCENARIOS,
  GRPC_SCENARIOS,
  jsonGateway,
  runGrpcScenario,
  runHttpScenario,
  runScenario,
  startEtcdCluster,
  type EtcdCluster,
} from '../src/index';

describe.sequential('scripted scenarios on etcd 3.4.23 (3 members)', () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 3, bcryptCost: 4 });
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  for (const scenario of EQUAL_SCENARIOS) {
    it(`etcdctl: ${scenario.name} (${scenario.spec})`, async () => {
      const run = await runScenario(etcd, scenario);
      expect(run.failures).toEqual([]);
      expect(etcd.allAlive()).toBe(true);
    });
  }

  for (const scenario of GRPC_SCENARIOS) {
    it(`gRPC: ${scenario.name} (${scenario.spec})`, async () => {
      const run = await runGrpcScenario(etcd, scenario);
      expect(run.failures).toEqual([]);
      expect(etcd.allAlive()).toBe(true);
    });
  }

  it(`JSON gateway: ${jsonGateway.name} (${jsonGateway.spec})`, async () => {
    const run = await runHttpScenario(etcd, jsonGateway);
    expect(run.failures).toEqual([]);
  });
});
