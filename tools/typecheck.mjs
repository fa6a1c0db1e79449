#!/usr/bin/env node
// Type-checks one project: its library sources (tsconfig.lib.json, or tsconfig.app.json for apps)
// and its tests (tsconfig.spec.json). Domain libraries compile without Node's types, so
// `process`, `Buffer` and timers do not type-check there.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const projectRoot = process.argv[2];
if (!projectRoot) {
  console.error('usage: typecheck.mjs <projectRoot>');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const configs = ['tsconfig.lib.json', 'tsconfig.app.json', 'tsconfig.spec.json']
  .map((name) => join(resolve(projectRoot), name))
  .filter((path) => existsSync(path));
if (configs.length === 0) {
  console.error(`typecheck: ${projectRoot} has no tsconfig.lib.json, tsconfig.app.json or tsconfig.spec.json`);
  process.exit(2);
}
for (const config of configs) {
  const result = spawnSync(process.execPath, [tsc, '-p', config, '--noEmit'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
