// Preload (`node --import ./tools/gc-log.mjs`): every garbage-collection pause of the process, and
// once a second its minor page faults and CPU time, appended to $GC_LOG_DIR/gc-<pid>-<name>.txt
// (<name>: etcd-gateway, raft-node or the script's file name). Lines:
//   <epoch ms> minor|major|incremental|weakcb <pause ms>
//   <epoch ms> usage <minor page faults so far> <CPU µs so far> <heap used bytes>
//   <epoch ms> stall <ms>   (the event loop was held past a 10 ms timer by 30 ms or more: the
//                            time is when the timer was due, the figure how late it ran)
// A pause is logged when Node hands it to the observer (a task or more after it happened), with
// the time it began. Without GC_LOG_DIR the preload does nothing. Summarise a run with
// `node tools/gc-log.mjs --summary DIR`: per file, the pauses by kind and the stalls (count, mean, longest, how
// many over 10 ms) and the page faults per scavenge.
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
/** A timer's lateness from which a stall is logged, and the timer's period. */
const STALL_LOG_MS = 30;
const STALL_PROBE_MS = 10;
/** Lines held between two writes; more are dropped (a process that collects that often is broken anyway). */
const MAX_PENDING_LINES = 10_000;

function processName() {
  const script = process.argv[1] ?? '';
  for (const name of ['etcd-gateway', 'raft-node', 'password-verifier', 'token-service']) if (script.includes(`/${name}/`)) return name;
  return basename(script).replace(/\.[cm]?[jt]s$/, '') || 'node';
}

function record(dir) {
  const file = join(dir, `gc-${process.pid}-${processName()}.txt`);
  let pending = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (pending.length >= MAX_PENDING_LINES) return;
      pending.push(`${(performance.timeOrigin + entry.startTime).toFixed(1)} ${KINDS[entry.detail?.kind] ?? 'other'} ${entry.duration.toFixed(2)}`);
    }
  }).observe({ entryTypes: ['gc'] });
  const flush = () => {
    const usage = process.resourceUsage();
    pending.push(`${Date.now()} usage ${usage.minorPageFault} ${usage.userCPUTime + usage.systemCPUTime} ${process.memoryUsage().heapUsed}`);
    appendFileSync(file, `${pending.join('\n')}\n`);
    pending = [];
  };
  let due = Date.now() + STALL_PROBE_MS;
  setInterval(() => {
    const now = Date.now();
    const late = now - due;
    if (late >= STALL_LOG_MS && pending.length < MAX_PENDING_LINES) pending.push(`${due} stall ${late}`);
    due = now + STALL_PROBE_MS;
  }, STALL_PROBE_MS).unref();
  setInterval(flush, 1000).unref();
  process.on('exit', flush);
}

function summarise(dir) {
  for (const name of readdirSync(dir).filter((file) => file.startsWith('gc-')).sort()) {
    const byKind = new Map();
    let firstFaults;
    let lastFaults = 0;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const [, kind, value] = line.split(' ');
      if (kind === 'usage') {
        firstFaults ??= Number(value);
        lastFaults = Number(value);
      } else if (kind !== undefined) {
        const pauses = byKind.get(kind) ?? [];
        pauses.push(Number(value));
        byKind.set(kind, pauses);
      }
    }
    const parts = [...byKind].map(([kind, pauses]) => {
      const total = pauses.reduce((sum, pause) => sum + pause, 0);
      return `${kind} ${pauses.length} (mean ${(total / pauses.length).toFixed(1)} ms, longest ${pauses.reduce((longest, pause) => Math.max(longest, pause), 0).toFixed(1)}, ${pauses.filter((pause) => pause > 10).length} over 10 ms)`;
    });
    const scavenges = byKind.get('minor')?.length ?? 0;
    const faults = lastFaults - (firstFaults ?? 0);
    console.log(`${name}: ${parts.join('; ')}; ${faults} page faults${scavenges > 0 ? `, ${Math.round(faults / scavenges)} per scavenge` : ''}`);
  }
}

if (process.argv[2] === '--summary' && process.argv[1]?.endsWith('gc-log.mjs')) summarise(process.argv[3] ?? '.');
else if (process.env.GC_LOG_DIR) record(process.env.GC_LOG_DIR);
