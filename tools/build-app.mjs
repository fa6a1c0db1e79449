#!/usr/bin/env node
// Bundles one app (`apps/<name>/src/main.ts`) into `dist/apps/<name>/main.js` with esbuild: the
// workspace libraries are inlined (aliases resolved from tsconfig), npm packages stay external
// and are installed next to the bundle at deploy time (`npm ci --omit=dev`). A module the app
// loads with `await import(...)` goes to `dist/apps/<name>/chunks/` with the code it alone uses,
// so a command that does not need the service (raft-node's `snapshot-restore`) does not load the
// service's npm packages; `node dist/apps/<name>/main.js` stays the way to run it.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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
const outdir = join(workspaceRoot, 'dist', projectRoot);
const outfile = join(outdir, 'main.js');
const result = await build({
  // The metafile's paths are relative to it.
  absWorkingDir: workspaceRoot,
  entryPoints: [entry],
  outdir,
  entryNames: 'main',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  tsconfig: join(workspaceRoot, 'tsconfig.json'),
  logLevel: 'warning',
  legalComments: 'none',
  metafile: true,
});
// Chunk names carry a hash of their content, so an earlier build's chunks would stay beside the
// new ones: those this build did not write go once it is done (not before: a process of the app
// starting meanwhile still finds every chunk its main.js names).
const chunks = join(outdir, 'chunks');
const writtenChunks = new Set(
  Object.keys(result.metafile.outputs)
    .map((path) => resolve(workspaceRoot, path))
    .filter((path) => dirname(path) === chunks),
);
for (const name of existsSync(chunks) ? readdirSync(chunks) : []) {
  if (!writtenChunks.has(join(chunks, name))) rmSync(join(chunks, name), { force: true });
}
console.log(`build-app: wrote ${outfile}${writtenChunks.size > 0 ? ` and ${relative(outdir, chunks)}/` : ''}`);
