#!/usr/bin/env node
// Summarises a sampling heap profile (tools/heap-sampling.mjs, or node --heap-prof): sampled bytes
// by allocating function (self) and by every function on the allocating stacks (inclusive).
// Usage: node tools/alloc-profile-summary.mjs FILE [--top N] [--match REGEX (inclusive list only)]
import { readFileSync } from 'node:fs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: alloc-profile-summary.mjs FILE.heapprofile [--top N] [--match REGEX]');
  process.exit(2);
}
const option = (name) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
const top = Number(option('--top')) || 25;
const match = option('--match') === undefined ? undefined : new RegExp(option('--match'));
const profile = JSON.parse(readFileSync(file, 'utf8'));

const label = ({ callFrame: frame }) => `${frame.functionName || '(anonymous)'} ${(frame.url || '').split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
const self = new Map();
const inclusive = new Map();
let total = 0;
// Depth-first with an explicit stack: [node, labels of its callers].
const pending = [[profile.head, new Set()]];
while (pending.length > 0) {
  const [node, callers] = pending.pop();
  const name = label(node);
  const stack = new Set(callers).add(name);
  total += node.selfSize;
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  for (const frame of stack) inclusive.set(frame, (inclusive.get(frame) ?? 0) + node.selfSize);
  for (const child of node.children ?? []) pending.push([child, stack]);
}

const print = (title, entries) => {
  console.log(`\n${title}:`);
  for (const [name, bytes] of entries.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * bytes) / total).toFixed(1).padStart(6)}%  ${name}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} MB sampled`);
print('allocating functions (self)', [...self]);
print('functions on the allocating stacks (inclusive)', [...inclusive].filter(([name]) => match === undefined || match.test(name)));
