// Benchmark (not a test): how long a member takes to produce its local snapshot's data, taken in
// steps as the driver takes it (NodeSnapshotTask: the key space written a few hundred keys per step
// into 1 MiB chunks that are never joined) in turns of 10 ms with the event loop let run between
// them, at WARD_BENCH_KEYS keys (default 1,000,000) of 35-byte keys and 256-byte
// values. Reports the time, the longest step and the longest event-loop delay seen meanwhile
// (what a member serving during the snapshot would wait; issue 20), then the time to boot a state
// machine from those bytes (what a member's restart and a follower's install of the leader's
// snapshot decode, in one step). Three rounds.
//   npx tsx apps/raft-node/bench/snapshot.bench.ts        (or: npx nx run raft-node:bench)
// On a machine whose fresh memory is dear (a Firecracker guest with free-page reporting costs
// ~35 µs per first-touched 4 KiB page), each whole-state copy into new memory costs seconds; the
// chunks are such memory too.
import { Applier } from '@ward/etcd/apply';
import { encodeSnapshotHead } from '@ward/raft/core';
import { chunksByteLength, joinChunks } from '@ward/shared/binary';
import { MemberList } from '../src/membership/member-list';
import { NodeSnapshotTask, StateMachine } from '../src/state-machine';
import { takeInTurns } from '../src/snapshot-turns';
import type { SnapshotStepResult } from '@ward/etcd/kv-store';
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

async function main(): Promise<void> {
  for (let round = 1; round <= ROUNDS; round++) {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    const task = new NodeSnapshotTask(KEYS, CONF_STATE, 1n, MemberList.of([], []), applier.snapshotTask());
    let steps = 0;
    let longestStepMs = 0;
    const step = (): SnapshotStepResult => {
      const stepStarted = performance.now();
      const result = task.step();
      longestStepMs = Math.max(longestStepMs, performance.now() - stepStarted);
      steps++;
      return result;
    };
    // As the driver takes it: turns of SNAPSHOT_TURN_MS, the event loop let run between them.
    const result = await takeInTurns(step, () => false);
    if (result !== 'done') throw new Error(`snapshot task ended ${result}`);
    const chunks = task.chunks;
    const stepped = performance.now();
    const bytes = chunksByteLength(chunks);
    const head = encodeSnapshotHead({ index: KEYS, term: 1, confState: CONF_STATE }, bytes);
    const done = performance.now();
    delay.disable();
    console.log(
      `round ${round}: ${(bytes / 1e6).toFixed(0)} MB in ${(done - started).toFixed(0)} ms ` +
        `(${steps} steps ${(stepped - started).toFixed(0)} ms, longest step ${longestStepMs.toFixed(1)} ms, ` +
        `longest event-loop delay ${(delay.max / 1e6).toFixed(1)} ms, file head ${head.length} B ${(done - stepped).toFixed(1)} ms)`,
    );
    // The member reads the file into one buffer before decoding it; that read is not timed here.
    const data = joinChunks(chunks);
    const cpuBefore = process.cpuUsage();
    const restoreStarted = performance.now();
    const restored = StateMachine.boot(BOOT_OPTIONS, { data, metadata: { index: KEYS, term: 1, confState: CONF_STATE } });
    const restoreMs = performance.now() - restoreStarted;
    const cpu = process.cpuUsage(cpuBefore);
    if (restored.applier.keySpaceView.currentRevision !== KEYS + 1) throw new Error(`restored revision ${restored.applier.keySpaceView.currentRevision}, not ${KEYS + 1}`);
    console.log(`round ${round}: restored in ${restoreMs.toFixed(0)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, garbage collection threads included)`);
  }
}

void main();
