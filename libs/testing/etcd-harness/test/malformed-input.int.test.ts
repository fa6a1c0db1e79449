// Reference side of the security probes: the answers real etcd 3.4.23 gives to malformed and
// oversized input, which ward must reproduce (security.int.test.ts runs them against ward).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, MALFORMED_INPUT_PROBES, checkProbe, resetTarget, setupAuth, startEtcdCluster, type EtcdCluster } from '../src/index';

describe('malformed and oversized input on etcd 3.4.23', () => {
  let etcd: EtcdCluster;
  let client: EtcdGrpcClient;
  let rootToken: string;
  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1, bcryptCost: 4 });
    client = new EtcdGrpcClient(etcd.clientEndpoint);
    await resetTarget(client);
    rootToken = (await setupAuth(client, {})) as string;
  });
  afterAll(async () => {
    client?.close();
    await etcd?.stop();
  });

  for (const probe of MALFORMED_INPUT_PROBES.filter((candidate) => candidate.wardOnly !== true)) {
    it(probe.label, async () => {
      const outcome = await probe.send(client, rootToken);
      expect(checkProbe(outcome, probe.expect)).toBeUndefined();
      expect(etcd.allAlive()).toBe(true);
    });
  }

  it('a probe checker that expects the wrong answer reports it', async () => {
    const outcome = await client.call('KV', 'Range', { key: Buffer.from('a') }, { token: 'garbage' });
    expect(checkProbe(outcome, { ok: true })).toContain('expected success');
    expect(checkProbe(outcome, { code: 7 })).toContain('expected 7');
    expect(checkProbe({ ok: false, code: 14, details: 'Connection dropped' }, { answered: true })).toContain('no coded answer');
  });
});
