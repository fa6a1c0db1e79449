// Benchmark (not a test): compile time for 1,000 AuthorizationPolicies applied to 100 workloads,
// and simulator decisions per second. Run: `npx nx run mesh-compiler-lib:bench`.
// Decision rates are given per wall-clock second and per CPU-second of this process (user +
// system time): on a shared, loaded machine the second is the steadier measure of the code.
// Two corpora: "typical" policies shaped like production ones (1-3 rules on principals,
// namespaces, methods, paths, ports, a header), and "fuzz" policies from the property-test
// generators (every field, up to 4 rules × 2 sources × 2 operations × 3 conditions: a stress case).
import fc from 'fast-check';
import type { AuthorizationPolicy, Rule } from '@ward/mesh/istio-api';
import { SeededRng } from '@ward/shared/clock';
import { PolicyTranslationCache } from '../src/authz/rule-set';
import { compileWorkload, type WorkloadConfig } from '../src/compile-workload';
import type { Workload } from '../src/input';
import { prepareSimulation, simulate } from '../src/simulate/simulate';
import type { SimulatedTraffic } from '../src/simulate/traffic';
import { authorizationPolicyArbitrary, peerAuthenticationArbitrary, trafficArbitrary } from '../test/policy-arbitraries';

const POLICIES = 1_000;
const NAMESPACES = 10;
const APPS_PER_NAMESPACE = 10;
/** Decisions per measurement. */
const SIMULATIONS = 100_000;

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Namespace (every 25th in the root namespace) and selector (a third select nothing) of policy `index`. */
function placement(index: number, rng: SeededRng): { namespace: string; app?: string } {
  const namespace = index % 25 === 0 ? 'istio-system' : `ns-${index % NAMESPACES}`;
  return rng.nextInt(3) === 0 ? { namespace } : { namespace, app: `app-${rng.nextInt(APPS_PER_NAMESPACE)}` };
}

function pick<T>(rng: SeededRng, items: readonly T[]): T {
  return items[rng.nextInt(items.length)] as T;
}

function typicalRule(rng: SeededRng): Rule {
  const from = rng.nextInt(2) === 0
    ? [{ source: { principals: [`cluster.local/ns/ns-${rng.nextInt(NAMESPACES)}/sa/app-${rng.nextInt(APPS_PER_NAMESPACE)}`] } }]
    : [{ source: { namespaces: [`ns-${rng.nextInt(NAMESPACES)}`, 'istio-system'] } }];
  const operation = {
    methods: rng.nextInt(2) === 0 ? ['GET'] : ['GET', 'POST'],
    paths: [pick(rng, ['/api/*', '/healthz', '/admin*', '/v1/users/*', '/metrics'])],
    ...(rng.nextInt(3) === 0 ? { ports: ['8080'] } : {}),
  };
  const when = rng.nextInt(4) === 0 ? [{ key: 'request.headers[x-tenant]', values: [`t-${rng.nextInt(5)}`] }] : undefined;
  return { from, to: [{ operation }], ...(when !== undefined ? { when } : {}) };
}

function typicalCorpus(): AuthorizationPolicy[] {
  const rng = new SeededRng(2026);
  return Array.from({ length: POLICIES }, (_, index) => {
    const { namespace, app } = placement(index, rng);
    const action = pick(rng, ['ALLOW', 'ALLOW', 'ALLOW', 'DENY', 'AUDIT'] as const);
    const rules = Array.from({ length: 1 + rng.nextInt(3) }, () => typicalRule(rng));
    return {
      apiVersion: 'security.istio.io/v1' as const,
      kind: 'AuthorizationPolicy' as const,
      metadata: { name: `policy-${index}`, namespace, labels: {}, annotations: (rng.nextInt(10) === 0 ? { 'istio.io/dry-run': 'true' } : {}) as Record<string, string> },
      spec: { action, rules, ...(app !== undefined ? { selector: { matchLabels: { app } } } : {}) },
    };
  });
}

function fuzzCorpus(): AuthorizationPolicy[] {
  const rng = new SeededRng(99);
  return fc.sample(authorizationPolicyArbitrary(['ALLOW', 'DENY', 'AUDIT']), { numRuns: POLICIES, seed: 99 }).map((policy, index) => {
    const { namespace, app } = placement(index, rng);
    const { selector: _selector, ...spec } = policy.spec;
    return { ...policy, metadata: { ...policy.metadata, name: `${policy.metadata.name}-${index}`, namespace }, spec: { ...spec, ...(app !== undefined ? { selector: { matchLabels: { app } } } : {}) } };
  });
}

function workloads(): Workload[] {
  const out: Workload[] = [];
  for (let n = 0; n < NAMESPACES; n++) {
    for (let a = 0; a < APPS_PER_NAMESPACE; a++) {
      out.push({
        name: `app-${a}`,
        namespace: `ns-${n}`,
        labels: { app: `app-${a}`, version: 'v1' },
        ports: [{ port: 8080, protocol: 'HTTP' }, { port: 9000, protocol: 'TCP' }, { port: 7070, protocol: 'UNKNOWN' }],
      });
    }
  }
  return out;
}

const targets = workloads();
const peerAuthns = fc.sample(peerAuthenticationArbitrary, { numRuns: 5, seed: 5 });
const traffic: SimulatedTraffic[] = fc.sample(trafficArbitrary, { numRuns: 1_000, seed: 11 });

function compileAll(policies: readonly AuthorizationPolicy[], cache: PolicyTranslationCache | undefined): { configs: WorkloadConfig[]; ms: number; rules: number } {
  const started = nowMs();
  const configs: WorkloadConfig[] = [];
  let rules = 0;
  for (const workload of targets) {
    const result = compileWorkload({ workload, authorizationPolicies: policies, peerAuthentications: peerAuthns, ...(cache !== undefined ? { cache } : {}) });
    if (result.config === undefined) throw new Error('compile failed');
    configs.push(result.config);
    for (const filter of result.config.httpFilters) {
      const typed = filter.typedConfig as { rules?: { policies?: object }; shadowRules?: { policies?: object } };
      rules += Object.keys(typed.rules?.policies ?? {}).length + Object.keys(typed.shadowRules?.policies ?? {}).length;
    }
  }
  return { configs, ms: nowMs() - started, rules };
}

interface Rate {
  readonly wall: number;
  readonly cpu: number;
}

function measure(count: number, run: (index: number) => void): Rate {
  const started = nowMs();
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < count; index++) run(index);
  const cpu = process.cpuUsage(cpuBefore);
  return { wall: count / ((nowMs() - started) / 1000), cpu: count / ((cpu.user + cpu.system) / 1e6) };
}

function formatRate(rate: Rate): string {
  const round = (value: number): string => (Math.round(value / 100) * 100).toLocaleString('en-US');
  return `${round(rate.wall)} / ${round(rate.cpu)}`;
}

/** Prepares every workload's listener for simulation; milliseconds per workload. */
function prepareAll(configs: readonly WorkloadConfig[]): number {
  const started = nowMs();
  for (const config of configs) prepareSimulation(config);
  return (nowMs() - started) / configs.length;
}

/**
 * Decisions per second, (a) workload by workload — each compiled workload answers 1,000
 * requests in a row, the "compile once, evaluate many" use — and (b) round robin over all
 * workloads, one request each in turn (the least cache-friendly order).
 */
function simulationRates(configs: readonly WorkloadConfig[]): { oneWorkload: Rate; roundRobin: Rate } {
  const per = SIMULATIONS / configs.length;
  const at = (index: number): SimulatedTraffic => traffic[index % traffic.length] as SimulatedTraffic;
  measure(10_000, (index) => simulate(configs[index % configs.length] as WorkloadConfig, at(index)));
  const oneWorkload = measure(SIMULATIONS, (index) => simulate(configs[Math.floor(index / per)] as WorkloadConfig, at(index)));
  const roundRobin = measure(SIMULATIONS, (index) => simulate(configs[index % configs.length] as WorkloadConfig, at(index)));
  return { oneWorkload, roundRobin };
}

const compileRows: string[] = [];
const simulatorRows: string[] = [];
for (const [name, corpus] of [['typical', typicalCorpus()], ['fuzz', fuzzCorpus()]] as const) {
  for (const workload of targets.slice(0, 10)) compileWorkload({ workload, authorizationPolicies: corpus });
  const uncached = compileAll(corpus, undefined);
  const cached = compileAll(corpus, new PolicyTranslationCache());
  const prepareMs = prepareAll(uncached.configs);
  const rates = simulationRates(uncached.configs);
  compileRows.push(`| ${name} | ${corpus.length} | ${targets.length} | ${uncached.rules} | ${uncached.ms.toFixed(0)} | ${(uncached.ms / targets.length).toFixed(1)} | ${cached.ms.toFixed(0)} |`);
  simulatorRows.push(`| ${name} | ${prepareMs.toFixed(2)} | ${formatRate(rates.oneWorkload)} | ${formatRate(rates.roundRobin)} |`);
}
console.log('| corpus | policies | workloads | HTTP rules emitted | compile 100 workloads (ms) | per workload (ms) | with PolicyTranslationCache (ms) |');
console.log('|---|---|---|---|---|---|---|');
for (const row of compileRows) console.log(row);
console.log('');
console.log(`Simulator, ${SIMULATIONS.toLocaleString('en-US')} decisions per measurement over ${traffic.length.toLocaleString('en-US')} generated requests and connections (decisions/s: per wall-clock second / per CPU-second):`);
console.log('');
console.log('| corpus | prepare per workload (ms) | workload by workload | round robin over 100 workloads |');
console.log('|---|---|---|---|');
for (const row of simulatorRows) console.log(row);
