#!/usr/bin/env node
// `npm test`: everything CI checks, in order of cost.
//  1. generated etcd and Envoy protos match their sources (tools/gen-*.mjs --check)
//  2. lint (module boundaries and domain rules included), type-check and unit tests of every project
//  3. integration tests (real sockets, processes, Redis, etcdctl), one project at a time
import { spawnSync } from 'node:child_process';

const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };
const parallel = process.env.WARD_TEST_PARALLEL ?? '2';

function step(title, command, args) {
  console.log(`\n=== ${title}: ${command} ${args.join(' ')}\n`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`\n=== ${title} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

step('generated etcd protos are current', 'node', ['tools/gen-proto.mjs', '--check']);
step('generated Envoy protos are current', 'node', ['tools/gen-envoy-api.mjs', '--check']);
step('lint, typecheck, unit tests', 'npx', ['nx', 'run-many', '-t', 'lint', 'typecheck', 'test', `--parallel=${parallel}`, '--output-style=static']);
step('integration tests', 'npx', ['nx', 'run-many', '-t', 'test-int', '--parallel=1', '--output-style=static']);
console.log('\n=== all checks passed');
