#!/usr/bin/env node
// `npm run test:compose`: the integration suites that speak to ward from outside, against the
// docker compose topology (infra/docker-compose.yml) instead of local processes.
//  1. infra/docker-engine.sh up: Docker engine and base images (stand-ins when no registry answers)
//  2. docker build -f infra/Dockerfile -t ward:local . (npm dependencies in their own cached layers)
//  3. the password-payload key file for the compose secret (generated once, never printed)
//  4. docker-compose -p ward-test up -d, then wait until every container is healthy
//  5. the suites, with WARD_TARGET_ENDPOINTS naming both gateways (SUITES below), then the
//     operations on the topology (infra/test/operations.int.test.ts; WARD_COMPOSE_OPERATIONS=0 skips them)
//  6. docker-compose down -v (also on failure or Ctrl-C); dockerd is stopped if this run started it
// WARD_COMPOSE_KEEP=1 leaves the topology (and the engine) running for a look afterwards.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const project = process.env.WARD_COMPOSE_PROJECT ?? 'ward-test';
const composeFile = join(root, 'infra', 'docker-compose.yml');
const secretsDir = join(root, '.ward', 'compose');
const engineScript = join(root, 'infra', 'docker-engine.sh');
const keep = process.env.WARD_COMPOSE_KEEP === '1';
const HEALTH_TIMEOUT_MS = 180_000;

// The gateways as clients see them (host ports of infra/docker-compose.yml).
const GATEWAYS = ['127.0.0.1:2379', '127.0.0.1:22379'];
const GATEWAY_HTTP = ['http://127.0.0.1:2381', 'http://127.0.0.1:22381'];

/**
 * The suites run against compose: each file with the name filter that selects its tests that
 * speak to ward only from outside (the others in those files need local processes with their own
 * settings and run in `npm test`). `reverse` puts the second gateway first.
 */
const SUITES = [
  { file: 'libs/testing/etcd-harness/test/differential.int.test.ts', filter: 'etcd 3.4.23 and ward, scenario by scenario', reverse: false },
  { file: 'libs/testing/etcd-harness/test/security.int.test.ts', filter: 'revoke while a client writes in a loop ward ', reverse: true },
];
// Operations on the topology itself (leader SIGKILL, rolling restart, verifier scale-out, Redis
// restart), last as they restart containers: about 3 minutes (figures in infra/README.md).
// WARD_COMPOSE_OPERATIONS=0 leaves them out (a quicker run of the suites alone).
if (process.env.WARD_COMPOSE_OPERATIONS !== '0') SUITES.push({ file: 'infra/test/operations.int.test.ts', filter: '', reverse: false });

const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(0);
const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', WARD_BCRYPT_COST: process.env.WARD_BCRYPT_COST ?? '4' };

function run(title, command, args, options = {}) {
  console.log(`\n=== [${seconds()} s] ${title}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env, cwd: root, ...options });
  if (result.status !== 0) throw new Error(`${title} failed (exit ${result.status ?? result.signal})`);
  return result;
}

function capture(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', env, cwd: root, maxBuffer: 16 * 1024 * 1024 });
  return { ok: result.status === 0, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

const compose = (...args) => ['-p', project, '-f', composeFile, ...args];

function ensureSecrets() {
  mkdirSync(secretsDir, { recursive: true, mode: 0o700 });
  chmodSync(secretsDir, 0o700);
  const keysFile = join(secretsDir, 'password-payload-keys');
  if (existsSync(keysFile)) return;
  console.log(`\n=== [${seconds()} s] generating the password-payload key into ${keysFile}`);
  const generated = capture('docker', ['run', '--rm', '--network', 'none', 'ward:local', 'node', 'dist/apps/password-verifier/main.js', '--generate-payload-key']);
  if (!generated.ok || generated.stdout.trim() === '') throw new Error(`--generate-payload-key failed: ${generated.stderr.slice(-500)}`);
  // Readable by the containers' node user (a bind mount keeps the mode); the directory is 0700.
  writeFileSync(keysFile, generated.stdout.trim() + '\n', { mode: 0o644 });
}

async function waitHealthy() {
  console.log(`\n=== [${seconds()} s] waiting until every container is healthy`);
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    const ps = capture('docker', ['ps', '-a', '--filter', `label=com.docker.compose.project=${project}`, '--format', '{{.Names}}\t{{.Status}}']);
    const lines = ps.stdout.trim().split('\n').filter(Boolean);
    last = lines.join('\n');
    const exited = lines.filter((line) => /\tExited/.test(line));
    if (exited.length > 0) throw new Error(`containers exited:\n${exited.join('\n')}`);
    if (lines.length > 0 && lines.every((line) => /\(healthy\)/.test(line))) {
      console.log(last);
      return;
    }
    await new Promise((done) => setTimeout(done, 1000));
  }
  throw new Error(`not every container became healthy within ${HEALTH_TIMEOUT_MS / 1000} s:\n${last}`);
}

function runSuite({ file, filter, reverse }) {
  const endpoints = reverse ? [...GATEWAYS].reverse() : GATEWAYS;
  const urls = reverse ? [...GATEWAY_HTTP].reverse() : GATEWAY_HTTP;
  run(`suite ${file} against ${endpoints.join(',')}`, 'npx', ['vitest', 'run', '--config', 'vitest.int.ts', file, ...(filter === '' ? [] : ['-t', filter])], {
    env: { ...env, WARD_TARGET_ENDPOINTS: endpoints.join(','), WARD_TARGET_HTTP_URLS: urls.join(','), WARD_COMPOSE_PROJECT: project },
  });
}

let engineStartedHere = false;
let composeUp = false;

async function tearDown() {
  if (keep) {
    console.log(`\n=== WARD_COMPOSE_KEEP=1: leaving project ${project} running (docker-compose ${compose('down', '-v').join(' ')})`);
    return;
  }
  if (composeUp) {
    const logs = capture('docker-compose', compose('logs', '--no-color', '--tail', '200'));
    writeFileSync(join(secretsDir, 'last-run.log'), logs.stdout + logs.stderr, { mode: 0o600 });
    run('tear down', 'docker-compose', compose('down', '-v', '--remove-orphans', '--timeout', '20'));
  }
  if (engineStartedHere) run('stop the engine this run started', engineScript, ['down']);
}

async function main() {
  engineStartedHere = !capture('docker', ['info']).ok;
  run('Docker engine and base images', engineScript, ['up']);
  const buildArgs = capture(engineScript, ['build-args']).stdout.split('\n').filter(Boolean);
  run('image', 'docker', ['build', '-f', 'infra/Dockerfile', '-t', 'ward:local', ...buildArgs, '.'], { env: { ...env, DOCKER_BUILDKIT: '0' } });
  ensureSecrets();
  for (const endpoint of [...GATEWAYS, '127.0.0.1:2381', '127.0.0.1:22381', '127.0.0.1:8088']) {
    const port = Number(endpoint.split(':')[1]);
    const busy = spawnSync(process.execPath, ['-e', `require('net').createServer().once('error',()=>process.exit(1)).listen(${port},'127.0.0.1',function(){this.close()})`]);
    if (busy.status !== 0) throw new Error(`127.0.0.1:${port} is in use; the compose topology publishes it (stop what listens there)`);
  }
  composeUp = true;
  run('compose up', 'docker-compose', compose('up', '-d', '--no-build', '--remove-orphans'));
  await waitHealthy();
  for (const suite of SUITES) runSuite(suite);
  console.log(`\n=== [${seconds()} s] compose suites passed`);
}

let exitCode = 0;
const interrupted = new Promise((done) => process.once('SIGINT', () => done('interrupted')));
try {
  const outcome = await Promise.race([main(), interrupted]);
  if (outcome === 'interrupted') throw new Error('interrupted');
} catch (error) {
  console.error(`\n=== [${seconds()} s] ${error.message}`);
  exitCode = 1;
} finally {
  try {
    await tearDown();
  } catch (error) {
    console.error(`=== tear down: ${error.message}`);
    exitCode = 1;
  }
}
console.log(`\n=== test:compose ${exitCode === 0 ? 'passed' : 'failed'} in ${seconds()} s`);
process.exit(exitCode);
