import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The workspace root (this file is libs/testing/cluster/src/bundle.ts). */
export const WORKSPACE_ROOT = resolve(import.meta.dirname, '..', '..', '..', '..');

/** Path of the raft-node bundle that `npx nx run raft-node:build` writes. */
export const RAFT_NODE_BUNDLE = join(WORKSPACE_ROOT, 'dist', 'apps', 'raft-node', 'main.js');

/** Builds the raft-node bundle (esbuild, about a second) so tests run the current sources. */
export function buildRaftNodeBundle(): string {
  execFileSync(process.execPath, [join(WORKSPACE_ROOT, 'tools', 'build-app.mjs'), 'apps/raft-node'], { cwd: WORKSPACE_ROOT, stdio: 'pipe' });
  if (!existsSync(RAFT_NODE_BUNDLE)) throw new Error(`build did not produce ${RAFT_NODE_BUNDLE}`);
  return RAFT_NODE_BUNDLE;
}
