import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The workspace root (this file is libs/testing/cluster/src/bundle.ts). */
export const WORKSPACE_ROOT = resolve(import.meta.dirname, '..', '..', '..', '..');

/** Path of the raft-node bundle that `npx nx run raft-node:build` writes. */
export const RAFT_NODE_BUNDLE = appBundlePath('raft-node');

/**
 * Path of the bundle that tools/build-app.mjs writes for apps/<app>; `root` is another checkout
 * of the workspace (with its own node_modules) for A/B runs of two builds.
 */
export function appBundlePath(app: string, root = WORKSPACE_ROOT): string {
  return join(root, 'dist', 'apps', app, 'main.js');
}

/** Builds apps/<app>'s bundle (esbuild, about a second) so tests run the current sources. */
export function buildAppBundle(app: string, root = WORKSPACE_ROOT): string {
  const bundle = appBundlePath(app, root);
  execFileSync(process.execPath, [join(root, 'tools', 'build-app.mjs'), `apps/${app}`], { cwd: root, stdio: 'pipe' });
  if (!existsSync(bundle)) throw new Error(`build did not produce ${bundle}`);
  return bundle;
}

/** Builds the raft-node bundle so tests run the current sources. */
export function buildRaftNodeBundle(): string {
  return buildAppBundle('raft-node');
}
