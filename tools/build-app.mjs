#!/usr/bin/env node
// Bundles one app (`apps/<name>/src/main.ts`) into `dist/apps/<name>/main.js` with esbuild: the
// workspace libraries are inlined (aliases resolved from tsconfig), npm packages stay external
// and are installed next to the bundle at deploy time (`npm ci --omit=dev`).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const projectRoot = process.argv[2];
if (!projectRoot) {
  console.error('usage: build-app.mjs <apps/name>');
  process.exit(2);
}
const workspaceRoot = resolve(import.meta.dirname, '..');
const entry = join(workspaceRoot, projectRoot, 'src/main.ts');
if (!existsSync(entry)) {
  console.error(`build-app: ${entry} does not exist`);
  process.exit(2);
}
const outfile = join(workspaceRoot, 'dist', projectRoot, 'main.js');
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  tsconfig: join(workspaceRoot, 'tsconfig.json'),
  logLevel: 'warning',
  legalComments: 'none',
});
console.log(`build-app: wrote ${outfile}`);
