#!/usr/bin/env node
// Launcher of the `ward-mesh` CLI: runs the TypeScript entry point through tsx with the
// workspace's tsconfig (for the @ward/* import aliases), from any working directory.
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

const appRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
register({ tsconfig: resolve(appRoot, '..', '..', 'tsconfig.json') });
await import(pathToFileURL(resolve(appRoot, 'src', 'main.ts')).href);
