// Shared helpers of the raft-node integration tests.
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { decodeEtcdMessage, encodeEtcdMessage, watchRequestToProto, type WatchCommand } from '@ward/etcd/api-mapping';
import type { ApplyResponse } from '@ward/etcd/apply';
import type { RangeResponse } from '@ward/etcd/kv-store';
import type { WatchResponse__Output } from '@ward/etcd/proto';
import { getRequest, type LocalCluster, type MemberExit, type NodeAnswer, type NodeApiClient } from '@ward/testing/cluster';

export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/** The value a Range answer holds for its single key (null: absent). */
export function valueOf(answer: NodeAnswer): string | null {
  if (answer.kind !== 'ok' || answer.response.type !== 'range') throw new Error(`not a range answer: ${JSON.stringify(answer, bigints)}`);
  const kv = (answer.response as Extract<ApplyResponse, { type: 'range' }>).response as RangeResponse;
  return kv.kvs.length === 0 ? null : text(kv.kvs[0]!.value);
}

export function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? text(value) : value;
}

/** Serializable read of `key` on one member. */
export async function localValue(client: NodeApiClient, key: string): Promise<string | null> {
  return valueOf(await client.read(getRequest(key), true, 2000));
}

/** A Watch stream on the internal API, with its responses collected. */
export function openWatch(client: NodeApiClient): { send(command: WatchCommand): void; responses: WatchResponse__Output[]; close(): void } {
  const raw = client.raw as unknown as { Watch(): ClientDuplexStream<object, { response: Buffer }> };
  const call = raw.Watch();
  const responses: WatchResponse__Output[] = [];
  call.on('data', (message: { response: Buffer }) => responses.push(decodeEtcdMessage('etcdserverpb.WatchResponse', message.response)));
  call.on('error', () => undefined);
  return {
    send: (command) => call.write({ username: '', auth_revision: '0', request: Buffer.from(encodeEtcdMessage('etcdserverpb.WatchRequest', watchRequestToProto(command))) }),
    responses,
    close: () => call.cancel(),
  };
}

/** Member ids other than `id`. */
export function others(cluster: LocalCluster, id: bigint): bigint[] {
  return cluster.members.map((m) => m.id).filter((m) => m !== id);
}

/** How member `id`'s process ends by itself within `timeoutMs` (throws if it is still running then). */
export async function exitOf(cluster: LocalCluster, id: bigint, timeoutMs: number): Promise<MemberExit> {
  const process = cluster.member(id).process;
  if (process === undefined) throw new Error(`member ${id} was never started`);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`member ${id} still running after ${timeoutMs} ms`)), timeoutMs)));
  try {
    return await Promise.race([process.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
