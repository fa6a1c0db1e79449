// Throughput of the consensus core alone: 3 nodes in one process, MemoryStorage, messages handed
// over in memory, one core. Proposals of 256 bytes are proposed on the leader in batches of N
// between two rounds of Ready handling; a proposal counts once the leader has applied it.
// A measurement, not a test: `npx nx run raft-core:bench` prints the table.
import { SeededRng } from '@ward/shared/clock';
import type { Message, NodeId } from '../src/index';
import { MemoryStorage, RawNode, votersConfState } from '../src/index';

const PAYLOAD_BYTES = 256;
const BATCH_SIZES = (process.env.BENCH_BATCHES ?? "1,8,64,256,1024").split(",").map(Number);
const MEASURE_MS = Number(process.env.BENCH_MS ?? 2_000);

interface Member {
  readonly node: RawNode;
  readonly storage: MemoryStorage;
  applied: number;
}

function cluster(): Map<NodeId, Member> {
  const ids = [1n, 2n, 3n];
  const members = new Map<NodeId, Member>();
  for (const id of ids) {
    const storage = new MemoryStorage(votersConfState(ids));
    const node = new RawNode({ id, storage, rng: new SeededRng(Number(id)), maxInflightMessages: 4096 });
    members.set(id, { node, storage, applied: 0 });
  }
  return members;
}

/** One round of Ready handling on every member; returns the messages to deliver. */
function handleReadies(members: Map<NodeId, Member>, outbox: Message[]): number {
  let readies = 0;
  for (const m of members.values()) {
    while (m.node.hasReady()) {
      const rd = m.node.ready();
      readies++;
      if (rd.snapshot !== undefined) m.storage.applySnapshot(rd.snapshot);
      m.storage.append(rd.entries);
      if (rd.hardState !== undefined) m.storage.setHardState(rd.hardState);
      for (const msg of rd.messages) outbox.push(msg);
      if (rd.committedEntries.length > 0) m.applied += rd.committedEntries.length;
      m.node.advance();
    }
  }
  return readies;
}

function deliver(members: Map<NodeId, Member>, outbox: Message[]): void {
  for (const msg of outbox) members.get(msg.to)!.node.step(msg);
  outbox.length = 0;
}

/** Drives the cluster until the leader applied `target` entries. */
function settle(members: Map<NodeId, Member>, leader: Member, target: number, outbox: Message[]): number {
  let readies = 0;
  for (let guard = 0; leader.applied < target; guard++) {
    if (guard > 10_000) throw new Error('cluster did not commit');
    readies += handleReadies(members, outbox);
    deliver(members, outbox);
  }
  return readies;
}

function measure(batch: number): { proposals: number; seconds: number; cpuSeconds: number; readies: number } {
  const members = cluster();
  const leader = members.get(1n)!;
  const outbox: Message[] = [];
  leader.node.campaign();
  settle(members, leader, 1, outbox);
  const payloads = Array.from({ length: 64 }, (_, i) => new Uint8Array(PAYLOAD_BYTES).fill(i));
  let proposals = 0;
  let readies = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  let now = start;
  while (now - start < MEASURE_MS) {
    for (let i = 0; i < 32; i++) {
      for (let j = 0; j < batch; j++) leader.node.propose(payloads[(proposals + j) & 63]!);
      proposals += batch;
      readies += settle(members, leader, leader.applied + batch, outbox);
      // Compact now and then, as an application would, so memory stays flat.
      for (const m of members.values()) {
        // Applied index = entries applied (no snapshots here); keep 1,000 entries behind it.
        if (m.applied - m.storage.firstIndex() > 200_000) m.storage.compact(m.applied - 1000);
      }
    }
    now = performance.now();
  }
  const cpu = process.cpuUsage(cpuStart);
  return { proposals, seconds: (now - start) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, readies };
}

function main(): void {
  measure(64); // warm-up
  console.log(`raft/core throughput: 3 nodes, in-memory storage and network, ${PAYLOAD_BYTES}-byte proposals, one core`);
  console.log('(per CPU-second: proposals divided by the process CPU time, steadier on a shared machine)');
  console.log('| batch | proposals | wall s | committed proposals/s (wall) | per CPU-second | µs/proposal (CPU) | Readies/batch |');
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  for (const batch of BATCH_SIZES) {
    const { proposals, seconds, cpuSeconds, readies } = measure(batch);
    console.log(
      `| ${batch} | ${proposals} | ${seconds.toFixed(2)} | ${fmt(proposals / seconds)} | ${fmt(proposals / cpuSeconds)} | ${((1e6 * cpuSeconds) / proposals).toFixed(2)} | ${(readies / (proposals / batch)).toFixed(1)} |`,
    );
  }
}

main();
