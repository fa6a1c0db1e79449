// Preload (`node --import ./tools/heap-sampling.mjs`): V8's sampling heap profiler from start-up to
// exit, counting objects the garbage collector has already freed too, so the profile says where a
// process allocates (what its GC time is spent on), not only what it still holds. Written when the
// process exits normally (ward's services do on SIGTERM) to $HEAP_SAMPLING_DIR/alloc-<pid>.heapprofile; summarise it with
// tools/alloc-profile-summary.mjs. HEAP_SAMPLING_INTERVAL_BYTES sets the mean bytes between
// samples (default 16384). HEAP_SAMPLING_PROMOTED=1 leaves out what scavenges freed: the profile
// is then what outlived the young generation (promoted, whether a full collection freed it later or
// not), by where it was allocated: what makes scavenges slow and the old generation grow.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.HEAP_SAMPLING_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const samplingInterval = Number(process.env.HEAP_SAMPLING_INTERVAL_BYTES) || 16384;
  const promotedOnly = process.env.HEAP_SAMPLING_PROMOTED === '1';
  session.post('HeapProfiler.startSampling', { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !promotedOnly });
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // The inspector answers synchronously on the main thread: the profile is on disk when this returns.
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) writeFileSync(join(dir, `alloc-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  };
  process.on('exit', write);
}
