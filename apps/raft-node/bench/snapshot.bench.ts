// Benchmark (not a test): how long a member takes to write its local snapshot, taken in steps as
// the driver takes it (NodeSnapshotTask, turns of 10 ms with the event loop let run between them),
// at WARD_BENCH_KEYS keys (default 1,000,000) of 35-byte keys and 256-byte values, two ways:
//   held:     the key space encoded a few hundred keys per step into new 1 MiB chunks, all held
//             until the end (how the members' Follow feed and `etcdctl snapshot save` take it);
//   streamed: sized first, then encoded into a few reused 1 MiB buffers and written to a snapshot
//             file (SnapshotStore, fsynced) turn by turn (how a member takes its local snapshot).
// Reports the time, CPU (garbage-collection threads included), the growth of the process's RSS,
// the longest step and the longest event-loop delay seen meanwhile (what a member serving during
// the snapshot would wait; issue 20), then the time to boot a state machine from those bytes in one
// step (what a follower's install of the leader's snapshot decodes), and from the file read and
// decoded in pieces (what a member's restart does).
// Three rounds.
//   npx tsx apps/raft-node/bench/snapshot.bench.ts        (or: npx nx run raft-node:bench)
// On a machine whose fresh memory is dear (a guest with free-page reporting pays a fault per
// first-touched 4 KiB page), memory as large as the state, touched once, costs seconds: the held
// chunks are such memory, the streamed buffers are not.
import { Applier } from '@ward/etcd/apply';
import { SnapshotStore } from '@ward/raft/storage';
import { chunksByteLength, joinChunks } from '@ward/shared/binary';
import { MemberList } from '../src/membership/member-list';
import { NodeSnapshotTask, StateMachine } from '../src/state-machine';
import { ChunkPool, sizeInTurns, snapshotPieces, takeInTurns } from '../src/snapshot-turns';
import type { SnapshotStepResult } from '@ward/etcd/kv-store';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const KEYS = Number(process.env.WARD_BENCH_KEYS ?? 1_000_000);
const ROUNDS = 3;

/** etcd-style keys, 35 bytes, written in a scrambled order (a multiplicative permutation). */
function keyOf(i: number): Buffer {
  return Buffer.from(`/registry/pods/ns-${String(Math.floor(i / 1000)).padStart(4, '0')}/pod-${String(i).padStart(8, '0')}`);
}

const applier = Applier.create();
const value = Buffer.alloc(256, 0x61);
const loadStarted = performance.now();
for (let n = 0; n < KEYS; n++) {
  const i = Number((BigInt(n) * 2654435761n) % BigInt(KEYS));
  applier.apply(n + 1, { header: { id: BigInt(n + 1), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: keyOf(i), value } } });
}
console.log(`${KEYS} keys applied in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

const CONF_STATE = { voters: [1n], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };
const BOOT_OPTIONS = { applier: {}, maxEntryBytes: 1 << 20, onUndecodable: () => undefined, initialMembers: [], initialConfState: CONF_STATE, clusterId: 1n };

interface Taken {
  readonly bytes: number;
  readonly data: Uint8Array;
}

/** One snapshot taken (held or streamed), with its time, CPU, RSS growth, longest step and event-loop delay printed. */
async function takeOnce(round: number, mode: 'held' | 'streamed', store: SnapshotStore): Promise<Taken> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 20);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const pool = new ChunkPool();
  const task = new NodeSnapshotTask(KEYS, CONF_STATE, 1n, MemberList.of([], []), applier.snapshotTask(mode === 'streamed' ? { nextBuffer: () => pool.take() } : undefined));
  let steps = 0;
  let longestStepMs = 0;
  const step = (): SnapshotStepResult => {
    const stepStarted = performance.now();
    const result = task.step();
    longestStepMs = Math.max(longestStepMs, performance.now() - stepStarted);
    steps++;
    return result;
  };
  let bytes: number;
  let file: Awaited<ReturnType<SnapshotStore['save']>> | undefined;
  if (mode === 'held') {
    // As the Follow feed takes it: turns of SNAPSHOT_TURN_MS, the event loop let run between them.
    const result = await takeInTurns(step, () => false);
    if (result !== 'done') throw new Error(`snapshot task ended ${result}`);
    bytes = chunksByteLength(task.chunks);
  } else {
    // As a member takes its local snapshot: sized in turns, then written turn by turn.
    const streamed: StreamedTask = { step, takeChunks: () => task.takeChunks(), get sizeBytes() { return task.sizeBytes; } };
    const sized = await sizeInTurns(streamed, () => false);
    if (sized !== 'done') throw new Error(`snapshot task ended ${sized}`);
    bytes = task.sizeBytes!;
    file = await store.save({ index: round, term: 1 }, snapshotPieces(streamed, pool, () => false));
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  delay.disable();
  // Not timed: the held chunks joined, the file read back (to compare them and restore from them).
  const data = file === undefined ? joinChunks(task.chunks) : (await store.load(file)).data;
  console.log(
    `round ${round} ${mode}: ${(bytes / 1e6).toFixed(0)} MB in ${ms.toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, ` +
      `RSS +${((rssPeak - rssBefore) / 1e6).toFixed(0)} MB at most (${steps} steps, longest ${longestStepMs.toFixed(1)} ms, ` +
      `longest event-loop delay ${(delay.max / 1e6).toFixed(1)} ms${mode === 'streamed' ? ', file written and fsynced' : ', chunks held, no file'})`,
  );
  return { bytes, data };
}

type StreamedTask = Parameters<typeof snapshotPieces>[0];

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ward-snapshot-bench-'));
  const { store } = await SnapshotStore.open({ dir, maxSnapshotBytes: 16 * 1024 ** 3 });
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const held = await takeOnce(round, 'held', store);
      const streamed = await takeOnce(round, 'streamed', store);
      if (Buffer.compare(Buffer.from(held.data), Buffer.from(streamed.data)) !== 0) throw new Error('the streamed snapshot differs from the held one');
      await store.purge(1);
      const cpuBefore = process.cpuUsage();
      const restoreStarted = performance.now();
      const restored = StateMachine.boot(BOOT_OPTIONS, { data: streamed.data, metadata: { index: KEYS, term: 1, confState: CONF_STATE } });
      const restoreMs = performance.now() - restoreStarted;
      const cpu = process.cpuUsage(cpuBefore);
      if (restored.applier.keySpaceView.currentRevision !== KEYS + 1) throw new Error(`restored revision ${restored.applier.keySpaceView.currentRevision}, not ${KEYS + 1}`);
      console.log(`round ${round}: restored in ${restoreMs.toFixed(0)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, garbage collection threads included)`);
      // As a member boots: the file read and decoded a piece at a time, never whole (issue 20).
      const [file] = await store.list();
      const rssBefore = process.memoryUsage.rss();
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 20);
      const streamedCpuBefore = process.cpuUsage();
      const streamedStarted = performance.now();
      const { totalBytes, pieces } = await store.readData(file!, 0);
      const state = await StateMachine.decodeStreamed(BOOT_OPTIONS.applier, { index: KEYS, term: 1, confState: CONF_STATE }, { totalBytes, data: pieces });
      const streamedMs = performance.now() - streamedStarted;
      const streamedCpu = process.cpuUsage(streamedCpuBefore);
      clearInterval(sampler);
      if (state.applier.keySpaceView.currentRevision !== KEYS + 1) throw new Error(`restored revision ${state.applier.keySpaceView.currentRevision}, not ${KEYS + 1}`);
      console.log(
        `round ${round}: restored from the file in pieces in ${streamedMs.toFixed(0)} ms (CPU ${((streamedCpu.user + streamedCpu.system) / 1000).toFixed(0)} ms), RSS +${((rssPeak - rssBefore) / 1e6).toFixed(0)} MB at most`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

void main();
