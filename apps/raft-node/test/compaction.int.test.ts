// A compaction of real members: answered as soon as it is applied (reads below it refused at once),
// its dropped records cut afterwards in turns (CompactionTurns), and a `physical` one answered only
// once they are cut: the leader's store_retained_bytes counts one version per key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyRequest } from '@ward/etcd/apply';
import { LocalCluster, buildRaftNodeBundle, getRequest } from '@ward/testing/cluster';

const HEADER = { id: 0n, username: '', authRevision: 0 };
const KEYS = 20_000;
const PUTS_PER_TXN = 100;
const VALUE = new Uint8Array(64).fill(7);
/** The quota's measure of one version: key (8 bytes) + value + 256 (etcd's per-revision overhead). */
const RECORD_BYTES = 8 + 64 + 256;

let cluster: LocalCluster;
let leader: bigint;

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

function txnOfPuts(from: number): ApplyRequest {
  const success = Array.from({ length: PUTS_PER_TXN }, (_, i) => ({ type: 'put' as const, request: { key: text(`k/${String(from + i).padStart(6, '0')}`), value: VALUE } }));
  return { header: HEADER, operation: { type: 'txn', request: { compare: [], success, failure: [] } } };
}

async function writeAll(): Promise<number> {
  let revision = 0;
  for (let from = 0; from < KEYS; from += PUTS_PER_TXN) {
    const answer = await cluster.client(leader).propose(txnOfPuts(from), 10_000);
    if (answer.kind !== 'ok') throw new Error(`txn: ${JSON.stringify(answer)}`);
    revision = answer.revision;
  }
  return revision;
}

async function retainedBytes(member: bigint): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${cluster.member(member).httpPort}/metrics`)).text();
  const line = body.split('\n').find((l) => /^\w*store_retained_bytes[ {]/.test(l));
  if (line === undefined) throw new Error('no store_retained_bytes in /metrics');
  return Number(line.split(' ').at(-1));
}

/** The leader's store_retained_bytes once `reached` holds for it, or its last value after 5 s. */
async function retainedBytesReaching(reached: (bytes: number) => boolean): Promise<number> {
  let bytes = await retainedBytes(leader);
  for (let tries = 0; tries < 50 && !reached(bytes); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    bytes = await retainedBytes(leader);
  }
  return bytes;
}

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 3 });
  leader = await cluster.waitForLeader(30_000);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('compaction of real members', () => {
  it('answers a compaction (physical: after the cut), refuses reads below it at once, and cuts the versions it drops: the retained bytes halve', async () => {
    const firstRevision = await writeAll();
    const revision = await writeAll();
    // Every key twice; the metric is published by the member's housekeeping, once a second.
    const before = await retainedBytesReaching((bytes) => bytes === 2 * KEYS * RECORD_BYTES);
    expect(before).toBe(2 * KEYS * RECORD_BYTES);
    const answer = await cluster.client(leader).propose({ header: HEADER, operation: { type: 'compact', request: { revision, physical: true } } }, 30_000);
    expect(answer.kind).toBe('ok');
    // Reads below the compaction are refused at once; at it, every key has its second value.
    const old = await cluster.client(leader).propose({ header: HEADER, operation: { type: 'range', request: { key: text('k/'), rangeEnd: text('k0'), revision: firstRevision, countOnly: true } } }, 10_000);
    expect(old).toMatchObject({ kind: 'error', message: 'etcdserver: mvcc: required revision has been compacted' });
    const now = await cluster.client(leader).propose({ header: HEADER, operation: { type: 'range', request: { key: text('k/'), rangeEnd: text('k0'), countOnly: true } } }, 10_000);
    expect(now.kind === 'ok' && now.response.type === 'range' ? now.response.response.count : -1).toBe(KEYS);
    // One version of every key is left.
    expect(await retainedBytesReaching((bytes) => bytes === KEYS * RECORD_BYTES)).toBe(KEYS * RECORD_BYTES);
    expect((await cluster.client(leader).propose(getRequest('k/000000'), 10_000)).kind).toBe('ok');
    // Not physical: answered when applied, the versions cut after the answer all the same.
    const third = await writeAll();
    expect(await retainedBytesReaching((bytes) => bytes === 2 * KEYS * RECORD_BYTES)).toBe(2 * KEYS * RECORD_BYTES);
    expect((await cluster.client(leader).propose({ header: HEADER, operation: { type: 'compact', request: { revision: third, physical: false } } }, 30_000)).kind).toBe('ok');
    expect(await retainedBytesReaching((bytes) => bytes === KEYS * RECORD_BYTES)).toBe(KEYS * RECORD_BYTES);
  }, 120_000);
});
