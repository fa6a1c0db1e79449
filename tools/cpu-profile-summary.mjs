#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): self time by package (or ward project) and the
// top functions by self time. Usage: node tools/cpu-profile-summary.mjs FILE [--top N]
import { readFileSync } from 'node:fs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: cpu-profile-summary.mjs FILE.cpuprofile [--top N]');
  process.exit(2);
}
const top = Number(rest[rest.indexOf('--top') + 1]) || 25;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
for (let i = 0; i < profile.samples.length; i++) {
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

const byGroup = new Map();
const byFunction = new Map();
let total = 0;
for (const [id, micros] of selfMicros) {
  const frame = nodes.get(id).callFrame;
  const group = groupOf(frame);
  if (group === 'idle') continue;
  total += micros;
  byGroup.set(group, (byGroup.get(group) ?? 0) + micros);
  const name = `${frame.functionName || '(anonymous)'} ${group} ${(frame.url ?? '').split('/').pop()}:${frame.lineNumber + 1}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
}
const pct = (micros) => `${((100 * micros) / total).toFixed(1).padStart(5)}%`;
console.log(`${file}: busy ${(total / 1e6).toFixed(2)} s`);
console.log('\nby package / project:');
for (const [group, micros] of [...byGroup].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${group}`);
console.log(`\ntop ${top} functions (self time):`);
for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(micros)}  ${name}`);
