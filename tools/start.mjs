#!/usr/bin/env node
// `npm start`: runs ward's main job. While the cluster apps do not exist yet, it says so and
// lists the projects the workspace has, so the command never pretends.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { listProjects } from './eslint/projects.mjs';

const workspaceRoot = resolve(import.meta.dirname, '..');
const projects = listProjects(workspaceRoot);
const apps = projects.filter((p) => p.tags.includes('type:app'));
const clusterApps = ['apps/raft-node', 'apps/etcd-gateway'];

if (!clusterApps.every((app) => existsSync(resolve(workspaceRoot, app)))) {
  console.log('ward: the local cluster (3 raft-nodes + etcd-gateway on 127.0.0.1:2379) is not built yet.');
  console.log('What exists today:\n');
  for (const project of projects.sort((a, b) => a.root.localeCompare(b.root))) {
    console.log(`  ${project.root.padEnd(34)} ${project.tags.join(' ')}`);
  }
  console.log(`\n${apps.length} runnable app(s). Run the checks with: npm test`);
  process.exit(0);
}
