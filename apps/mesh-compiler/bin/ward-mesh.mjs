#!/usr/bin/env node
// Launcher of the `ward-mesh` CLI, from any working directory.
// - In a checkout with the dev dependencies, it runs the TypeScript entry point through tsx with
//   the workspace's tsconfig (for the @ward/* import aliases): always the current sources.
// - Without tsx (a production install, `npm ci --omit=dev`), or with WARD_MESH_LAUNCH=bundle, it
//   runs the esbuild bundle dist/apps/mesh-compiler/main.js (`npx nx run mesh-compiler:build`).
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const appRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const workspaceRoot = resolve(appRoot, '..', '..');
const bundle = resolve(workspaceRoot, 'dist', 'apps', 'mesh-compiler', 'main.js');

async function tsxRegister() {
  if (process.env.WARD_MESH_LAUNCH === 'bundle') return undefined;
  try {
    return (await import('tsx/esm/api')).register;
  } catch {
    return undefined;
  }
}

const register = await tsxRegister();
if (register !== undefined) {
  register({ tsconfig: resolve(workspaceRoot, 'tsconfig.json') });
  await import(pathToFileURL(resolve(appRoot, 'src', 'main.ts')).href);
} else if (existsSync(bundle)) {
  await import(pathToFileURL(bundle).href);
} else {
  process.stderr.write(`ward-mesh: no bundle at ${bundle} and no tsx to run the sources: run "npx nx run mesh-compiler:build" (or install the dev dependencies)\n`);
  process.exitCode = 70;
}
