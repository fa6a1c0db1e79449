// Scripted etcdctl sessions (spec §7 rows and §8.3 behaviours where Debian's etcd 3.4.23 equals
// the target). Each scenario must do exactly what its script says on real etcd 3.4.23 (3 members).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EQUAL_SCENARIOS, runScenario, startEtcdCluster, type EtcdCluster } from '@ward/testing/etcd-harness';

describe.sequential('etcdctl scenarios on etcd 3.4.23 (3 members)', () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 3, bcryptCost: 4 });
  });
  afterAll(async () => {
    await etcd?.stop();
  });

  for (const scenario of EQUAL_SCENARIOS) {
    it(`${scenario.name} (${scenario.spec})`, async () => {
      const run = await runScenario(etcd, scenario);
      expect(run.failures).toEqual([]);
      expect(etcd.allAlive()).toBe(true);
    });
  }
});
