#!/usr/bin/env node
// `npm start`: ward's embedded default on this machine — three raft-nodes and an etcd-gateway as
// local processes on 127.0.0.1, data under .ward/data, logs under .ward/logs. etcd clients connect
// to 127.0.0.1:2379. Ctrl-C (SIGINT) or SIGTERM stops every process cleanly and exits 0.
//
// Password tier: bcrypt inside the gateway by default (no Redis needed, none asked); with
// WARD_REDIS_URL set, the BullMQ tier (a password-verifier process per WARD_PASSWORD_VERIFIERS,
// default 1) on that Redis, which the gateway then requires (not ready while it is unreachable)
// unless WARD_PASSWORD_FALLBACK=in-process.
//
// Tokens: etcd's simple tokens by default; with WARD_AUTH_TOKEN=jwt a token-service process
// (gRPC WARD_TOKEN_SERVICE_PORT, default 2383; JWKS, health and metrics on
// WARD_TOKEN_SERVICE_HTTP_PORT, default 2384) issues EdDSA JWTs, rotating its keys every
// WARD_TOKEN_ROTATION_SECONDS (default 86400), and the gateway verifies them against the
// cluster's signing-key directory and hands Authenticate to it.
//
// Overrides (tests use free ports and a temp dir): WARD_DATA_DIR, WARD_CLIENT_PORT (2379),
// WARD_HTTP_PORT (2381), WARD_NODE_API_PORTS (23791,23792,23793), WARD_NODE_PEER_PORTS
// (23801,23802,23803), WARD_NODE_HTTP_PORTS (23821,23822,23823: raft-node health and metrics, as
// in tools/local-raft-cluster.mjs), WARD_BCRYPT_COST (10), WARD_LOG_LEVEL (info).
//
// Members added later (etcdctl member add, then started by hand as the README's "Replacing a
// member" shows): WARD_EXTRA_MEMBERS=<id>=<name>=<peerPort>=<apiPort>=<httpPort>,... makes this
// launcher run them too (RAFT_NODE_INITIAL_CLUSTER_STATE=existing, data under data/<name>) and
// gives the gateway their internal APIs. Members 1-3 are always started; one that was removed
// exits by itself (code 0, after saying so), which is reported; it is not restarted and the others
// keep serving.
//
// Supervision (tools/launcher/restart-policy.mjs): once ready, a process that dies (killed,
// crashed) is restarted after 200 ms, doubling to 10 s while it keeps dying within 30 s of its
// start; after 8 such crashes in a row it is left stopped (logged) and, if it was the gateway or
// the token-service, everything stops. A process that fails before ready stops everything (a port
// in use, a bad setting: restarting would not help). Every child reads its stdin from this
// launcher (tools/launcher/parent-watch.mjs): when the launcher ends, however (SIGKILL included),
// the pipe closes and each child stops itself. Ctrl-C/SIGTERM stops the gateway first, then the
// rest. (tools/local-raft-cluster.mjs starts the raft-nodes alone, without any of this.)
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REMOVED_MEMBER_TEXT, RESTART_POLICY, classifyExit, nextRestart } from './launcher/restart-policy.mjs';

const root = resolve(import.meta.dirname, '..');
const env = process.env;
const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

function ports(name, fallback, count) {
  const list = (env[name] ?? fallback).split(',').map((p) => Number(p.trim()));
  if (list.length !== count || list.some((p) => !Number.isInteger(p) || p < 1 || p > 65_535)) {
    fail(`${name} must be ${count} port number(s), got ${env[name]}`);
  }
  return list;
}

function fail(message) {
  console.error(`ward: ${message}`);
  process.exit(2);
}

const dataDir = resolve(env.WARD_DATA_DIR ?? join(root, '.ward'));
const [clientPort] = ports('WARD_CLIENT_PORT', '2379', 1);
const [httpPort] = ports('WARD_HTTP_PORT', '2381', 1);
const apiPorts = ports('WARD_NODE_API_PORTS', '23791,23792,23793', 3);
const peerPorts = ports('WARD_NODE_PEER_PORTS', '23801,23802,23803', 3);
const nodeHttpPorts = ports('WARD_NODE_HTTP_PORTS', '23821,23822,23823', 3);
const EXTRA_MEMBER = /^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})=([A-Za-z0-9][A-Za-z0-9._-]{0,62})=([0-9]{1,5})=([0-9]{1,5})=([0-9]{1,5})$/;
const extraMembers = (env.WARD_EXTRA_MEMBERS ?? '')
  .split(',')
  .map((item) => item.trim())
  .filter((item) => item !== '')
  .map((item) => {
    const match = EXTRA_MEMBER.exec(item);
    if (match === null) fail(`WARD_EXTRA_MEMBERS: ${JSON.stringify(item)} must be id=name=peerPort=apiPort=httpPort`);
    const [, id, name, peerPort, apiPort, nodeHttpPort] = match;
    return { id, name, peerPort: Number(peerPort), apiPort: Number(apiPort), httpPort: Number(nodeHttpPort) };
  });
if (extraMembers.length > 6) fail('WARD_EXTRA_MEMBERS: at most 6 members (9 in all)');
const logLevel = env.WARD_LOG_LEVEL ?? 'info';
const bcryptCost = env.WARD_BCRYPT_COST ?? '10';
// TLS on the client port, as etcd's --cert-file/--key-file/--trusted-ca-file/--client-cert-auth.
const tlsEnv = Object.fromEntries(
  [
    ['WARD_CERT_FILE', 'GATEWAY_CERT_FILE'],
    ['WARD_KEY_FILE', 'GATEWAY_KEY_FILE'],
    ['WARD_TRUSTED_CA_FILE', 'GATEWAY_TRUSTED_CA_FILE'],
    ['WARD_CLIENT_CERT_AUTH', 'GATEWAY_CLIENT_CERT_AUTH'],
  ]
    .filter(([ward]) => env[ward])
    .map(([ward, gateway]) => [gateway, env[ward]]),
);
const tlsFlags = env.WARD_CERT_FILE
  ? ` --cacert <CA file>${env.WARD_CLIENT_CERT_AUTH === 'true' ? ' --cert <client cert> --key <client key>' : ''}`
  : '';
const redisUrl = env.WARD_REDIS_URL ?? '';
const verifierCount = Number(env.WARD_PASSWORD_VERIFIERS ?? '1');
const passwordFallback = env.WARD_PASSWORD_FALLBACK ?? 'none';
if (passwordFallback !== 'none' && passwordFallback !== 'in-process') fail(`WARD_PASSWORD_FALLBACK must be none or in-process, got ${passwordFallback}`);
const authToken = env.WARD_AUTH_TOKEN ?? 'simple';
if (authToken !== 'simple' && authToken !== 'jwt') fail(`WARD_AUTH_TOKEN must be simple or jwt, got ${authToken}`);
const jwt = authToken === 'jwt';
const [tokenServicePort] = ports('WARD_TOKEN_SERVICE_PORT', '2383', 1);
const [tokenServiceHttpPort] = ports('WARD_TOKEN_SERVICE_HTTP_PORT', '2384', 1);

const apps = ['raft-node', 'etcd-gateway', ...(redisUrl ? ['password-verifier'] : []), ...(jwt ? ['token-service'] : [])];
for (const app of apps) {
  execFileSync(process.execPath, [join(root, 'tools', 'build-app.mjs'), `apps/${app}`], { cwd: root, stdio: 'pipe' });
}
const bundle = (app) => join(root, 'dist', 'apps', app, 'main.js');

mkdirSync(join(dataDir, 'data'), { recursive: true });
mkdirSync(join(dataDir, 'logs'), { recursive: true });

/** Every supervised process (its current child in `entry.child`); `stopping` once shutdown has begun. */
const children = [];
let stopping = false;
/** Set once the cluster answered: from then on a process that dies is restarted. */
let ready = false;
const parentWatch = pathToFileURL(join(root, 'tools', 'launcher', 'parent-watch.mjs')).href;

function childEnv(extra) {
  const base = {};
  for (const [name, value] of Object.entries(env)) {
    if (!/^(RAFT_NODE|GATEWAY|VERIFIER|TOKEN_SERVICE)_/.test(name)) base[name] = value;
  }
  return { ...base, ...extra };
}

function start(name, app, extraEnv) {
  const entry = { name, app, extraEnv, logFile: join(dataDir, 'logs', `${name}.log`), quickCrashes: 0, restartTimer: undefined, child: undefined, exited: Promise.resolve() };
  children.push(entry);
  spawnChild(entry, 'started');
  return entry;
}

function spawnChild(entry, verb) {
  const { name, app, extraEnv, logFile } = entry;
  // Output goes straight to the log file (never through this launcher, so a child that outlives it
  // for its graceful stop can still write); stdin is a pipe this launcher never writes to, whose
  // end tells the child the launcher is gone. detached: a terminal's Ctrl-C reaches this launcher
  // only; it stops the children in order.
  const out = openSync(logFile, 'a');
  const logStart = fstatSync(out).size;
  let child;
  try {
    child = spawn(process.execPath, ['--import', parentWatch, bundle(app)], { cwd: root, env: childEnv(extraEnv), stdio: ['pipe', out, out], detached: true });
  } finally {
    closeSync(out);
  }
  child.stdin.on('error', () => undefined); // EPIPE once the child is gone
  const startedAt = performance.now();
  entry.child = child;
  entry.exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  entry.exited.then(({ code, signal }) => {
    const uptimeMs = performance.now() - startedAt;
    const saidRemoved = app === 'raft-node' && code === 0 && logSays(logFile, logStart, REMOVED_MEMBER_TEXT);
    const kind = classifyExit({ app, code, signal, saidRemoved, stopping, ready });
    if (kind === 'stopping') return;
    if (kind === 'removed') {
      // As etcd's members do: the others keep serving.
      console.log(`ward: ${name} stopped: it was removed from the cluster (see ${logFile}); delete ${extraEnv.RAFT_NODE_DATA_DIR} once you no longer need it`);
      return;
    }
    const how = signal ?? `code ${code}`;
    if (kind === 'failed-to-start') {
      console.error(`ward: ${name} exited unexpectedly (${how}); see ${logFile}`);
      void shutdown(1);
      return;
    }
    const decision = nextRestart(entry.quickCrashes, uptimeMs);
    entry.quickCrashes = decision.quickCrashes;
    const upFor = `${(uptimeMs / 1000).toFixed(1)} s`;
    if (decision.action === 'give-up') {
      const essential = app === 'etcd-gateway' || app === 'token-service';
      console.error(
        `ward: ${name} exited unexpectedly (${how}) after ${upFor}, its ${decision.quickCrashes - 1}th restart in a row within ${RESTART_POLICY.stableAfterMs / 1000} s of starting: not restarting it; see ${logFile}` +
          (essential ? '' : '; the others keep serving'),
      );
      if (essential) void shutdown(1);
      return;
    }
    console.error(`ward: ${name} exited unexpectedly (${how}) after ${upFor}; restarting it in ${decision.delayMs} ms (see ${logFile})`);
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = undefined;
      if (!stopping) spawnChild(entry, 'restarted');
    }, decision.delayMs);
  });
  console.log(`ward: ${verb} ${name} (pid ${child.pid}), log ${logFile}`);
}

/** Whether the last 64 KiB a child wrote to its log since `from` contain `text`. */
function logSays(logFile, from, text) {
  const fd = openSync(logFile, 'r');
  try {
    const end = fstatSync(fd).size;
    const start = Math.max(from, end - 64 * 1024);
    const buffer = Buffer.alloc(Math.max(0, end - start));
    const read = readSync(fd, buffer, 0, buffer.length, start);
    return buffer.subarray(0, read).toString('utf8').includes(text);
  } finally {
    closeSync(fd);
  }
}

/** The password tier's shared sealing keys, generated once and kept (0600) under the data dir. */
function payloadKeys() {
  const file = join(dataDir, 'password-payload-keys');
  if (!existsSync(file)) {
    const key = execFileSync(process.execPath, [bundle('password-verifier'), '--generate-payload-key'], { encoding: 'utf8' }).trim();
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

const members = apiPorts.map((apiPort, i) => `${i + 1}=node-${i + 1}=${HOST}:${peerPorts[i]}=${HOST}:${apiPort}`).join(',');
for (let i = 0; i < 3; i++) {
  start(`raft-node-${i + 1}`, 'raft-node', {
    RAFT_NODE_MEMBER_ID: String(i + 1),
    RAFT_NODE_MEMBERS: members,
    RAFT_NODE_DATA_DIR: join(dataDir, 'data', `node-${i + 1}`),
    RAFT_NODE_HTTP_ADDRESS: `${HOST}:${nodeHttpPorts[i]}`,
    RAFT_NODE_LOG_LEVEL: logLevel,
  });
}
// Members that joined later list the initial members and every such member (as they were started by hand).
const joinedList = [members, ...extraMembers.map((m) => `${m.id}=${m.name}=${HOST}:${m.peerPort}=${HOST}:${m.apiPort}`)].join(',');
for (const m of extraMembers) {
  start(`raft-node-${m.name.replace(/^node-/, "")}`, 'raft-node', {
    RAFT_NODE_MEMBER_ID: m.id,
    RAFT_NODE_MEMBERS: joinedList,
    RAFT_NODE_INITIAL_CLUSTER_STATE: 'existing',
    RAFT_NODE_DATA_DIR: join(dataDir, 'data', m.name),
    RAFT_NODE_HTTP_ADDRESS: `${HOST}:${m.httpPort}`,
    RAFT_NODE_LOG_LEVEL: logLevel,
  });
}
const gatewayEnv = {
  GATEWAY_GRPC_HOST: HOST,
  GATEWAY_GRPC_PORT: String(clientPort),
  GATEWAY_HTTP_HOST: HOST,
  GATEWAY_HTTP_PORT: String(httpPort),
  GATEWAY_NODE_ENDPOINTS: [...apiPorts, ...extraMembers.map((m) => m.apiPort)].map((port) => `${HOST}:${port}`).join(','),
  GATEWAY_BCRYPT_COST: bcryptCost,
  GATEWAY_LOG_LEVEL: logLevel,
  ...tlsEnv,
};
if (redisUrl) {
  const keys = payloadKeys();
  Object.assign(gatewayEnv, { GATEWAY_REDIS_URL: redisUrl, GATEWAY_PASSWORD_PAYLOAD_KEYS: keys, GATEWAY_PASSWORD_FALLBACK: passwordFallback });
  const redis = new URL(redisUrl);
  for (let i = 0; i < verifierCount; i++) {
    start(`password-verifier-${i + 1}`, 'password-verifier', {
      VERIFIER_REDIS_HOST: redis.hostname,
      VERIFIER_REDIS_PORT: redis.port || '6379',
      VERIFIER_REDIS_PASSWORD: decodeURIComponent(redis.password),
      VERIFIER_REDIS_TLS: String(redis.protocol === 'rediss:'),
      VERIFIER_PAYLOAD_KEYS: keys,
      VERIFIER_BCRYPT_COST: bcryptCost,
      VERIFIER_HTTP_PORT: '0',
      VERIFIER_LOG_LEVEL: logLevel,
    });
  }
}
if (jwt) {
  start('token-service', 'token-service', {
    TOKEN_SERVICE_GRPC_HOST: HOST,
    TOKEN_SERVICE_GRPC_PORT: String(tokenServicePort),
    TOKEN_SERVICE_HTTP_HOST: HOST,
    TOKEN_SERVICE_HTTP_PORT: String(tokenServiceHttpPort),
    TOKEN_SERVICE_NODE_ENDPOINTS: gatewayEnv.GATEWAY_NODE_ENDPOINTS,
    TOKEN_SERVICE_BCRYPT_COST: bcryptCost,
    TOKEN_SERVICE_ROTATION_PERIOD_SECONDS: env.WARD_TOKEN_ROTATION_SECONDS ?? '86400',
    TOKEN_SERVICE_LOG_LEVEL: logLevel,
    ...(redisUrl ? { TOKEN_SERVICE_REDIS_URL: redisUrl, TOKEN_SERVICE_PASSWORD_PAYLOAD_KEYS: gatewayEnv.GATEWAY_PASSWORD_PAYLOAD_KEYS, TOKEN_SERVICE_PASSWORD_FALLBACK: passwordFallback } : {}),
  });
  gatewayEnv.GATEWAY_TOKEN_SERVICE_ENDPOINTS = `${HOST}:${tokenServicePort}`;
}
start('etcd-gateway', 'etcd-gateway', gatewayEnv);

/** Ready when the gateway answers a Range through the cluster (any etcd answer, auth on or off). */
async function waitReady() {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline && !stopping) {
    try {
      const response = await fetch(`http://${HOST}:${httpPort}/v3/kv/range`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from('ward-ready').toString('base64') }),
        signal: AbortSignal.timeout(2000),
      });
      const body = await response.json().catch(() => ({}));
      const gatewayUp = response.ok || (typeof body.code === 'number' && body.code !== 14 && body.code !== 4);
      // With JWTs, the token-service too: its keys are in the cluster's directory.
      const tokensUp = !jwt || (await fetch(`http://${HOST}:${tokenServiceHttpPort}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
      if (gatewayUp && tokensUp) return true;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  return false;
}

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  console.log('ward: stopping');
  // Gateway first (it drains client calls), then the token-service, the verifiers and raft-nodes.
  const rank = (entry) => (entry.name === 'etcd-gateway' ? 2 : entry.name === 'token-service' ? 1 : 0);
  const ordered = [...children].sort((a, b) => rank(b) - rank(a));
  for (const entry of children) clearTimeout(entry.restartTimer);
  for (const entry of ordered) {
    if (entry.child.exitCode !== null || entry.child.signalCode !== null) continue;
    entry.child.kill('SIGTERM');
    const timer = setTimeout(() => entry.child.kill('SIGKILL'), STOP_GRACE_MS);
    await entry.exited;
    clearTimeout(timer);
  }
  console.log('ward: stopped');
  process.exit(exitCode);
}

process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

if (await waitReady()) {
  ready = true;
  const tier = redisUrl ? `BullMQ on ${new URL(redisUrl).host} (${verifierCount} password-verifier${verifierCount === 1 ? '' : 's'})` : 'bcrypt in the gateway';
  console.log(`ward: ready — etcd v3 API on ${HOST}:${clientPort}, JSON gateway and /metrics on http://${HOST}:${httpPort}`);
  console.log(`ward: data in ${join(dataDir, 'data')}, password tier: ${tier}. Ctrl-C stops everything.`);
  if (jwt) console.log(`ward: tokens are JWTs from the token-service on ${HOST}:${tokenServicePort}; keys at http://${HOST}:${tokenServiceHttpPort}/.well-known/jwks.json`);
  console.log(`ward: try   ETCDCTL_API=3 etcdctl --endpoints ${HOST}:${clientPort}${tlsFlags} put foo bar`);
  console.log(`ward: with auth enabled (see README):   etcdctl --endpoints ${HOST}:${clientPort}${tlsFlags} --user root:<password> put foo bar`);
} else if (!stopping) {
  console.error(`ward: not ready after ${READY_TIMEOUT_MS / 1000} s; logs are in ${join(dataDir, 'logs')}`);
  await shutdown(1);
}
