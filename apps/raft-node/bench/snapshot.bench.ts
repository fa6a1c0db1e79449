// Benchmark (not a test): how long a member takes to produce its local snapshot's data (the state
// machine's chunks, joined once) and the raft snapshot file's chunks, at WARD_BENCH_KEYS keys
// (default 1,000,000) of 35-byte keys and 256-byte values, in the order the driver does it. The
// member's event loop is blocked for that long (issue 20). Three rounds, wall-clock ms each.
//   npx tsx apps/raft-node/bench/snapshot.bench.ts        (or: npx nx run raft-node:bench)
// On a machine whose fresh memory is dear (a Firecracker guest with free-page reporting costs
// ~35 µs per first-touched 4 KiB page), each whole-state copy into new memory costs seconds.
import { Applier } from '@ward/etcd/apply';
import { encodeSnapshotChunks, type Snapshot } from '@ward/raft/core';
import { joinChunks } from '@ward/shared/binary';
import { encodeNodeSnapshotChunks } from '../src/membership/codec';
import { MemberList } from '../src/membership/member-list';

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

for (let round = 1; round <= ROUNDS; round++) {
  const started = performance.now();
  const state = applier.snapshotChunks();
  const encoded = performance.now();
  const data = joinChunks(encodeNodeSnapshotChunks({ clusterId: 1n, members: MemberList.of([], []), applier: state }));
  const joined = performance.now();
  const snapshot: Snapshot = { metadata: { index: KEYS, term: 1, confState: { voters: [1n], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, data };
  const [head] = encodeSnapshotChunks(snapshot);
  const done = performance.now();
  console.log(
    `round ${round}: ${(data.length / 1e6).toFixed(0)} MB in ${(done - started).toFixed(0)} ms ` +
      `(state encoded in ${state.length} chunks ${(encoded - started).toFixed(0)} ms, joined ${(joined - encoded).toFixed(0)} ms, file head ${head.length} B ${(done - joined).toFixed(0)} ms)`,
  );
}
