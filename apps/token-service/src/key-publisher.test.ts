// The publisher against a scripted cluster: a directory read that was on its way while a key got
// published does not make that key look revoked; a key missing from a later read does.
import { describe, expect, it } from 'vitest';
import { encodeApplyResponse } from '@ward/etcd/api-mapping';
import { decodeApplyRequest, type SigningKeyRecord } from '@ward/etcd/apply';
import { createLogger } from '@ward/platform/logging';
import { ManualClock } from '@ward/shared/clock';
import type { AuthReader } from './auth-reader';
import { KeyPublisher } from './key-publisher';
import { KeyRing } from './key-ring';

const CONTEXT = { clusterId: 1n, memberId: 1n, raftTerm: 1 };

class ScriptedCluster {
  readonly directory = new Map<string, SigningKeyRecord>();
  /** When set, the next list read answers with the directory as it was when it was proposed, once released. */
  hold: { release: () => void } | undefined;

  async propose(entry: Uint8Array): Promise<Buffer> {
    const { operation } = decodeApplyRequest(entry);
    if (operation.type === 'signingKeyPublish') {
      this.directory.set(operation.request.key.keyId, operation.request.key);
      return Buffer.from(encodeApplyResponse({ type: 'signingKeyPublish', response: {} }, 1, CONTEXT));
    }
    if (operation.type === 'signingKeyList') {
      const snapshot = [...this.directory.values()];
      if (this.hold !== undefined) await new Promise<void>((resolve) => (this.hold = { release: resolve }));
      return Buffer.from(encodeApplyResponse({ type: 'signingKeyList', response: { keys: snapshot, authRevision: 1 } }, 1, CONTEXT));
    }
    throw new Error(`unexpected ${operation.type}`);
  }
}

async function setup(): Promise<{ clock: ManualClock; ring: KeyRing; cluster: ScriptedCluster; publisher: KeyPublisher }> {
  const clock = new ManualClock(1_700_000_000_000);
  const ring = await KeyRing.create({ signMethod: 'EdDSA', clock, ttlMs: 10_000, clockToleranceMs: 1000, periodMs: 60_000 });
  const cluster = new ScriptedCluster();
  const publisher = new KeyPublisher({ cluster: cluster as unknown as AuthReader, ring, publishUser: 'root', clock, logger: createLogger({ name: 'test', level: 'silent' }) });
  return { clock, ring, cluster, publisher };
}

describe('KeyPublisher', () => {
  it('a read proposed before a key was acknowledged does not revoke it', async () => {
    const { clock, ring, cluster, publisher } = await setup();
    await publisher.sync();
    cluster.hold = { release: () => undefined };
    const reading = publisher.checkRevocations();
    // Meanwhile the period ends: a new next key is generated and published.
    clock.advance(60_000);
    await ring.maintain();
    await publisher.sync();
    const newest = ring.published().at(-1)!.keyId;
    cluster.hold.release();
    await reading;
    expect(ring.published().map((key) => key.keyId)).toContain(newest);
  });

  it('a key missing from a read proposed after its acknowledgement was revoked: dropped, another signs', async () => {
    const { ring, cluster, publisher } = await setup();
    await publisher.sync();
    const signing = await ring.signingKey();
    cluster.directory.delete(signing.keyId);
    await publisher.checkRevocations();
    expect(ring.published().map((key) => key.keyId)).not.toContain(signing.keyId);
    expect((await ring.signingKey()).keyId).not.toBe(signing.keyId);
  });
});
