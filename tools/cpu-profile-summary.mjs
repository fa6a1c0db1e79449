#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): self time by package (or ward project) and the
// top functions by self time, then by total time (self plus callees). Usage:
//   node tools/cpu-profile-summary.mjs FILE [--top N] [--skip-s S] [--until-s U] [--long-ms MS]
// --skip-s leaves out the profile's first S seconds (start-up, a bench's set-up and warm-up);
// --until-s everything after its first U seconds (one phase of a longer run).
// --long-ms lists every run of busy samples of at least MS ms (no idle sample between them: one
// event-loop task, or tasks back to back), garbage collection apart from code, with what ran most
// in it: where the event loop stalled.
import { readFileSync } from 'node:fs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: cpu-profile-summary.mjs FILE.cpuprofile [--top N] [--skip-s S] [--until-s U] [--long-ms MS]');
  process.exit(2);
}
const option = (name) => (rest.includes(name) ? Number(rest[rest.indexOf(name) + 1]) : undefined);
const top = option('--top') || 25;
const skipMicros = (option('--skip-s') ?? 0) * 1e6;
const untilMicros = (option('--until-s') ?? Infinity) * 1e6;
const longMicros = option('--long-ms') === undefined ? undefined : option('--long-ms') * 1e3;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const selfMicros = new Map();
let elapsedMicros = 0;
for (let i = 0; i < profile.samples.length; i++) {
  if (elapsedMicros + (profile.timeDeltas[i] ?? 0) > untilMicros) break;
  elapsedMicros += profile.timeDeltas[i] ?? 0;
  if (elapsedMicros < skipMicros) continue;
  const id = profile.samples[i];
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}

function groupOf(frame) {
  const url = frame.url ?? '';
  if (frame.functionName === '(garbage collector)') return 'GC';
  if (frame.functionName === '(idle)') return 'idle';
  if (frame.functionName === '(program)') return 'program (native, unattributed)';
  if (url === '') return 'native/builtin';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const module = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (module) return module[1];
  const ward = url.match(/(apps|libs)\/([^/]+(?:\/[^/]+)?)/);
  return ward ? `ward ${ward[1]}/${ward[2]}` : url.split('/').slice(-2).join('/');
}

const names = new Map();
/** A profile node's function as `name group file:line`, made once per node. */
function nameOf(id) {
  let name = names.get(id);
  if (name === undefined) {
    const frame = nodes.get(id).callFrame;
    name = `${frame.functionName || '(anonymous)'} ${groupOf(frame)} ${(frame.url ?? '').split('/').pop()}:${frame.lineNumber + 1}`;
    names.set(id, name);
  }
  return name;
}

const byGroup = new Map();
const byFunction = new Map();
const inclusive = new Map();
let total = 0;
for (const [id, micros] of selfMicros) {
  const frame = nodes.get(id).callFrame;
  const group = groupOf(frame);
  if (group === 'idle') continue;
  total += micros;
  byGroup.set(group, (byGroup.get(group) ?? 0) + micros);
  const name = nameOf(id);
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  // Each function on the sample's stack counts it once (recursion not twice).
  const seen = new Set();
  for (let node = id; node !== undefined; node = parentOf.get(node)) {
    const caller = nameOf(node);
    if (seen.has(caller)) continue;
    seen.add(caller);
    inclusive.set(caller, (inclusive.get(caller) ?? 0) + micros);
  }
}
const pct = (micros) => `${((100 * micros) / total).toFixed(1).padStart(5)}%`;
console.log(`${file}: busy ${(total / 1e6).toFixed(2)} s of ${((elapsedMicros - Math.min(skipMicros, elapsedMicros)) / 1e6).toFixed(2)} s (profile spans ${(elapsedMicros / 1e6).toFixed(2)} s)`);
console.log('\nby package / project:');
for (const [group, micros] of [...byGroup].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${group}`);
console.log(`\ntop ${top} functions (self time):`);
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${name}`);
console.log(`\ntop ${top} functions (total time: self and callees):`);
const roots = new Set(['(root) native/builtin :0', '(program) program (native, unattributed) :0']);
const byTotal = [...inclusive].filter(([name]) => !roots.has(name)).sort((a, b) => b[1] - a[1]);
for (const [name, micros] of byTotal.slice(0, top)) console.log(`  ${pct(micros)}  ${name}`);

if (longMicros !== undefined) {
  // Busy runs: consecutive samples none of which is idle (the loop never waited between them).
  const runs = [];
  let run = null;
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at > untilMicros) break;
    if (at < skipMicros) continue;
    const id = profile.samples[i];
    const name = nodes.get(id).callFrame.functionName;
    const kind = name === '(idle)' ? 'idle' : name === '(garbage collector)' ? 'GC' : 'code';
    if (run !== null && run.kind !== kind) {
      if (run.micros >= longMicros) runs.push(run);
      run = null;
    }
    if (kind === 'idle') continue;
    run ??= { kind, start: at - delta, micros: 0, samples: new Map() };
    run.micros += delta;
    run.samples.set(id, (run.samples.get(id) ?? 0) + delta);
  }
  if (run !== null && run.micros >= longMicros) runs.push(run);
  console.log(`\nbusy runs of ${longMicros / 1e3} ms or more: ${runs.length}${runs.length > top ? ` (the ${top} longest)` : ''}`);
  for (const { kind, start, micros, samples } of runs.sort((a, b) => b.micros - a.micros).slice(0, top)) {
    const within = new Map();
    for (const [id, sampleMicros] of samples) {
      const seen = new Set();
      for (let node = id; node !== undefined; node = parentOf.get(node)) {
        const caller = nameOf(node);
        if (seen.has(caller) || roots.has(caller)) continue;
        seen.add(caller);
        within.set(caller, (within.get(caller) ?? 0) + sampleMicros);
      }
    }
    console.log(`  at ${(start / 1e6).toFixed(2)} s: ${(micros / 1e3).toFixed(0)} ms${kind === 'GC' ? ' of garbage collection' : ''}`);
    if (kind === 'GC') continue;
    for (const [name, callerMicros] of [...within].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
      console.log(`    ${((100 * callerMicros) / micros).toFixed(0).padStart(3)}%  ${name}`);
    }
  }
}
