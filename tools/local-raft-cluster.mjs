#!/usr/bin/env node
// A local 3-member raft-node cluster on 127.0.0.1 with the default topology of the cluster
// contract: internal API on 2379N (23791..23793), peers on 2380N (23801..23803), health and
// metrics on 2382N (23821..23823), data under .ward/data/node-N, logs in .ward/logs/node-N.log.
//
//   node tools/local-raft-cluster.mjs          builds dist/apps/raft-node and runs until Ctrl-C
//   import { startLocalRaftCluster } from './local-raft-cluster.mjs'   (for `npm start`)
//
// Tests do not use this (fixed ports collide); they use @ward/testing/cluster with free ports.
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const WORKSPACE_ROOT = resolve(import.meta.dirname, '..');

/** The contract's default member list. */
export function defaultMembers(size = 3) {
  return Array.from({ length: size }, (_, i) => ({
    id: i + 1,
    name: `node-${i + 1}`,
    apiAddress: `127.0.0.1:${23791 + i}`,
    peerAddress: `127.0.0.1:${23801 + i}`,
    httpAddress: `127.0.0.1:${23821 + i}`,
  }));
}

/**
 * Builds the raft-node bundle and starts one process per member. Resolves once every member
 * answers /healthz. `stop()` sends SIGTERM (graceful) and waits for the exits.
 * @param {{ dataRoot?: string, logRoot?: string, members?: ReturnType<typeof defaultMembers>, env?: Record<string, string>, build?: boolean }} [options]
 */
export async function startLocalRaftCluster(options = {}) {
  const members = options.members ?? defaultMembers();
  const dataRoot = resolve(WORKSPACE_ROOT, options.dataRoot ?? '.ward/data');
  const logRoot = resolve(WORKSPACE_ROOT, options.logRoot ?? '.ward/logs');
  mkdirSync(logRoot, { recursive: true });
  if (options.build !== false) execFileSync(process.execPath, [join(WORKSPACE_ROOT, 'tools/build-app.mjs'), 'apps/raft-node'], { cwd: WORKSPACE_ROOT, stdio: 'inherit' });
  const list = members.map((m) => `${m.id}=${m.name}=${m.peerAddress}=${m.apiAddress}`).join(',');
  const children = members.map((m) => {
    const env = { ...process.env, RAFT_NODE_MEMBER_ID: String(m.id), RAFT_NODE_MEMBERS: list, RAFT_NODE_DATA_DIR: join(dataRoot, m.name), RAFT_NODE_HTTP_ADDRESS: m.httpAddress, ...options.env };
    const child = spawn(process.execPath, [join(WORKSPACE_ROOT, 'dist/apps/raft-node/main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(join(logRoot, `${m.name}.log`), { flags: 'a' });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
    return { member: m, child, exited };
  });
  await Promise.all(children.map(({ member, exited }) => waitHealthy(member, exited)));
  return {
    members,
    stop: async () => {
      for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.all(children.map(({ exited }) => exited));
    },
  };
}

async function waitHealthy(member, exited) {
  let gone;
  exited.then((exit) => (gone = exit));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${member.name} exited during start (${JSON.stringify(gone)}); see .ward/logs/${member.name}.log`);
    try {
      if ((await fetch(`http://${member.httpAddress}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${member.name} did not answer /healthz within 60 s`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const cluster = await startLocalRaftCluster();
  for (const m of cluster.members) console.log(`${m.name}: internal API ${m.apiAddress}, peers ${m.peerAddress}, health/metrics http://${m.httpAddress}`);
  console.log('raft-node cluster running (data in .ward/data, logs in .ward/logs); Ctrl-C stops it');
  const stop = async () => {
    await cluster.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
