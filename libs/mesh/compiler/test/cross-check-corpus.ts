// A large cross-check run (not a unit test): `npx nx run mesh-compiler-lib:cross-check [-- sets perSet seed]`.
// Compiles random policy sets, sends random traffic, and compares every RBAC decision of ward's
// engine with @grpc/grpc-js-xds's. The corpus excludes the documented differences (see
// src/simulate/rbac-cross-check.test.ts); any mismatch is printed and fails the run.
// grpc-js-xds's RE2 (re2-wasm) never frees its 16 MiB heap, so the corpus runs in child
// processes of CHUNK_SETS policy sets each.
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { compileWorkload } from '../src/compile-workload';
import type { SimulatedTraffic } from '../src/simulate/traffic';
import { HTTPBIN } from '../src/testing';
import { authorizationPolicyArbitrary, trafficArbitrary } from './policy-arbitraries';
import { crossCheck } from './rbac-cross-check';

const CHUNK_SETS = 100;
const [setsArg = '400', perSetArg = '100', seedArg = '1', mode = 'parent'] = process.argv.slice(2);
const sets = Number(setsArg);
const perSet = Number(perSetArg);
const seed = Number(seedArg);
if (![sets, perSet, seed].every(Number.isInteger) || sets < 1 || perSet < 1) {
  console.error('usage: cross-check-corpus.ts [policySets] [requestsPerSet] [seed]');
  process.exit(2);
}

if (mode === 'parent') {
  const started = process.hrtime.bigint();
  const totals = { decisions: 0, allowed: 0, mismatches: 0 };
  for (let done = 0; done < sets; done += CHUNK_SETS) {
    const chunk = Math.min(CHUNK_SETS, sets - done);
    const child = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, String(chunk), String(perSet), String(seed + done * 7919), 'child'], { encoding: 'utf8' });
    const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (child.status === null || line === undefined) {
      console.error(child.stderr);
      process.exit(1);
    }
    const [decisions = 0, allowed = 0, mismatches = 0] = line.slice('RESULT '.length).split(' ').map(Number);
    totals.decisions += decisions;
    totals.allowed += allowed;
    totals.mismatches += mismatches;
    if (mismatches > 0) console.log(child.stdout);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log('| policy sets | requests | RBAC decisions | allowed | denied | mismatches | seconds |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| ${sets} | ${sets * perSet} | ${totals.decisions} | ${totals.allowed} | ${totals.decisions - totals.allowed} | ${totals.mismatches} | ${seconds.toFixed(1)} |`);
  process.exit(totals.mismatches === 0 ? 0 : 1);
}

const policySets = fc.sample(
  fc.array(authorizationPolicyArbitrary(['ALLOW', 'DENY']), { minLength: 1, maxLength: 4 }).filter((s) => !JSON.stringify(s).includes('{*')),
  { numRuns: sets, seed },
);
const traffic = fc.sample(
  trafficArbitrary.map((t): SimulatedTraffic => {
    const { sni: _sni, remoteIp: _remote, http, ...rest } = t;
    if (http === undefined) return rest;
    const { requestPrincipal: _principal, jwtClaims: _claims, ...request } = http;
    return { ...rest, http: request };
  }),
  { numRuns: sets * perSet, seed: seed + 1 },
);

let decisions = 0;
let allowed = 0;
const mismatches: string[] = [];
policySets.forEach((policies, index) => {
  const config = compileWorkload({ workload: HTTPBIN, authorizationPolicies: policies }).config;
  if (config === undefined) throw new Error('compile failed');
  for (const t of traffic.slice(index * perSet, (index + 1) * perSet)) {
    for (const outcome of crossCheck(config, t)) {
      decisions++;
      if (outcome.ward) allowed++;
      if (outcome.ward !== outcome.grpc) mismatches.push(`${outcome.label}: ward=${outcome.ward} grpc=${outcome.grpc}\n  traffic ${JSON.stringify(t)}\n  policies ${JSON.stringify(policies)}`);
    }
  }
});
for (const mismatch of mismatches.slice(0, 10)) console.log(mismatch);
console.log(`RESULT ${decisions} ${allowed} ${mismatches.length}`);
