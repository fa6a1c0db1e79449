#!/usr/bin/env node
// `npm run bench`: every project's benchmarks, one at a time so they do not compete for the CPU.
import { spawnSync } from 'node:child_process';

const result = spawnSync('npx', ['nx', 'run-many', '-t', 'bench', '--parallel=1', '--output-style=stream', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NX_DAEMON: 'false' },
});
process.exit(result.status ?? 1);
