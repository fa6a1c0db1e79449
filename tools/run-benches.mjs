#!/usr/bin/env node
// Runs every `bench/*.bench.ts` of one project, one after the other, with tsx.
// Benchmarks print their own tables; they are measurements, never pass/fail tests.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const projectRoot = process.argv[2];
const benchDir = join(projectRoot ?? '', 'bench');
if (!projectRoot || !existsSync(benchDir)) {
  console.error(`run-benches: ${benchDir} does not exist`);
  process.exit(2);
}
const files = readdirSync(benchDir).filter((f) => f.endsWith('.bench.ts')).sort();
for (const file of files) {
  console.log(`\n## ${join(benchDir, file)}\n`);
  const result = spawnSync('npx', ['tsx', join(benchDir, file), ...process.argv.slice(3)], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
