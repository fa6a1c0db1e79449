// The gateway's bound on what it reads from a member is not its bound on one client's answer
// (GATEWAY_GRPC_MAX_SEND_BYTES): a member writes the answers of one turn as one Exchange message, up
// to its own message bound (NODE_MAX_MESSAGE_BYTES). A gateway with a small bound
// answers every call of such a message, and refuses only the one answer over its bound, with
// grpc-js's RESOURCE_EXHAUSTED, instead of losing the connection and every call on it; its read
// replica applies an entry over that bound like any other, instead of starting again from a snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, startWardCluster, type WardCluster } from '../src/index';

const MIB = 1024 * 1024;
const KEYS = 16;
const VALUE_BYTES = 400 * 1024;

/** A cluster whose gateway answers clients at most 1 MiB, up for the enclosing describe, and a client of it. */
function smallAnswerCluster(gatewayEnv: Record<string, string> = {}): { ward: () => WardCluster; client: () => EtcdGrpcClient } {
  let ward: WardCluster | undefined;
  let client: EtcdGrpcClient | undefined;
  beforeAll(async () => {
    ward = await startWardCluster({ nodes: 3, gatewayEnv: { GATEWAY_GRPC_MAX_SEND_BYTES: String(MIB), ...gatewayEnv } });
    client = new EtcdGrpcClient(ward.clientEndpoint);
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await ward?.stop();
  });
  return { ward: () => ward!, client: () => client! };
}

describe('a gateway with a 1 MiB answer bound, reading from the members', () => {
  // Reads go to the members (no replica), so each answer crosses the Exchange.
  const { client } = smallAnswerCluster({ GATEWAY_READ_REPLICA: 'false' });

  it('answers reads whose answers together exceed it, sent at once', async () => {
    for (let i = 0; i < KEYS; i++) {
      const put = await client().call('KV', 'Put', { key: Buffer.from(`big/${i}`), value: Buffer.alloc(VALUE_BYTES, i) });
      expect(put.ok).toBe(true);
    }
    // 16 answers of 400 KiB asked at once, 6.4 MiB in all: whichever of them a member sends together.
    const reads = await Promise.all(Array.from({ length: KEYS }, (_, i) => client().call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key: Buffer.from(`big/${i}`) })));
    for (const [i, read] of reads.entries()) {
      expect(read).toMatchObject({ ok: true });
      if (read.ok) expect(read.response.kvs[0]!.value.equals(Buffer.alloc(VALUE_BYTES, i))).toBe(true);
    }
  });

  it('refuses one answer over it as RESOURCE_EXHAUSTED, at once, and keeps serving', async () => {
    const put = await client().call('KV', 'Put', { key: Buffer.from('huge'), value: Buffer.alloc(MIB + 1024, 1) });
    expect(put.ok).toBe(true);
    const started = performance.now();
    const read = await client().call('KV', 'Range', { key: Buffer.from('huge') });
    expect(read).toMatchObject({ ok: false, code: 8 });
    if (!read.ok) expect(read.details).toMatch(/^Sent message larger than max \(\d+ vs\. 1048576\)$/);
    // Not after a broken connection's retries (4 s before this change).
    expect(performance.now() - started).toBeLessThan(2000);
    const after = await client().call('KV', 'Range', { key: Buffer.from('big/0') });
    expect(after.ok).toBe(true);
  });
});

describe('a gateway with a 1 MiB answer bound and its read replica', () => {
  const { ward, client } = smallAnswerCluster();

  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${ward().jsonGatewayUrl}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  it('applies an entry over the bound without starting again from a snapshot', async () => {
    expect(await client().call('KV', 'Put', { key: Buffer.from('small'), value: Buffer.from('1') })).toMatchObject({ ok: true });
    await expect.poll(() => metric('ward_gateway_replica_synced'), { timeout: 20_000 }).toBe(1);
    expect(await client().call('KV', 'Put', { key: Buffer.from('huge'), value: Buffer.alloc(MIB + 1024, 1) })).toMatchObject({ ok: true });
    const after = await client().call<{ kvs: { value: Buffer }[] }>('KV', 'Range', { key: Buffer.from('small'), serializable: true });
    expect(after).toMatchObject({ ok: true });
    expect(await metric('ward_gateway_replica_resyncs')).toBe(0);
    expect(await metric('ward_gateway_replica_synced')).toBe(1);
  });
});

