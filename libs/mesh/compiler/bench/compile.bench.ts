// Benchmark (not a test): compile time for 1,000 AuthorizationPolicies applied to 100 workloads,
// and simulator decisions per second. Run: `npx nx run mesh-compiler-lib:bench`.
import fc from 'fast-check';
import type { AuthorizationPolicy } from '@ward/mesh/istio-api';
import { PolicyTranslationCache } from '../src/authz/rule-set';
import { compileWorkload, type WorkloadConfig } from '../src/compile-workload';
import type { Workload } from '../src/input';
import { evaluateRbac } from '../src/simulate/rbac-engine';
import { simulate } from '../src/simulate/simulate';
import type { SimulatedTraffic } from '../src/simulate/traffic';
import { authorizationPolicyArbitrary, peerAuthenticationArbitrary, trafficArbitrary } from '../test/policy-arbitraries';

const POLICIES = 1_000;
const NAMESPACES = 10;
const APPS_PER_NAMESPACE = 10;
const SIMULATIONS = 20_000;

function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** 1,000 policies spread over 10 namespaces (plus the root namespace), selecting one of 10 apps or none. */
function corpus(): AuthorizationPolicy[] {
  const base = fc.sample(authorizationPolicyArbitrary(['ALLOW', 'DENY', 'AUDIT']), { numRuns: POLICIES, seed: 99 });
  return base.map((policy, index) => {
    const namespace = index % 25 === 0 ? 'istio-system' : `ns-${index % NAMESPACES}`;
    const app = index % 3 === 0 ? undefined : `app-${(index * 7) % APPS_PER_NAMESPACE}`;
    return {
      ...policy,
      metadata: { ...policy.metadata, name: `${policy.metadata.name}-${index}`, namespace },
      spec: { ...policy.spec, ...(app === undefined ? { selector: undefined } : { selector: { matchLabels: { app } } }) },
    };
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

function row(cells: Array<string | number>): string {
  return `| ${cells.join(' | ')} |`;
}

const policies = corpus();
const peerAuthns = fc.sample(peerAuthenticationArbitrary, { numRuns: 5, seed: 5 });
const targets = workloads();

function compileAll(cache: PolicyTranslationCache | undefined): { configs: WorkloadConfig[]; ms: number; rules: number } {
  const started = nowMs();
  const configs: WorkloadConfig[] = [];
  let rules = 0;
  for (const workload of targets) {
    const result = compileWorkload({ workload, authorizationPolicies: policies, peerAuthentications: peerAuthns, ...(cache !== undefined ? { cache } : {}) });
    if (result.config === undefined) throw new Error('compile failed');
    configs.push(result.config);
    rules += result.config.httpFilters.reduce((n, f) => n + Object.keys((f.typedConfig as { rules?: { policies?: object } }).rules?.policies ?? {}).length, 0);
  }
  return { configs, ms: nowMs() - started, rules };
}

// Warm-up (JIT), then measure.
for (const workload of targets.slice(0, 10)) compileWorkload({ workload, authorizationPolicies: policies, peerAuthentications: peerAuthns });
const uncached = compileAll(undefined);
const cached = compileAll(new PolicyTranslationCache());
const { configs, rules } = uncached;
let started = nowMs();

const traffic: SimulatedTraffic[] = fc.sample(trafficArbitrary, { numRuns: 1_000, seed: 11 });
const busiest = configs.reduce((a, b) => (b.httpFilters.length + b.networkFilters.length > a.httpFilters.length + a.networkFilters.length ? b : a));
for (let i = 0; i < 1_000; i++) simulate(busiest, traffic[i % traffic.length] as SimulatedTraffic);
started = nowMs();
for (let i = 0; i < SIMULATIONS; i++) simulate(configs[i % configs.length] as WorkloadConfig, traffic[i % traffic.length] as SimulatedTraffic);
const simulateMs = nowMs() - started;

const rbac = busiest.httpFilters.map((f) => (f.typedConfig as { rules?: Parameters<typeof evaluateRbac>[0] }).rules).filter((r) => r !== undefined);
const attributes = {
  destinationIp: { bytes: [10, 0, 0, 1] },
  destinationPort: 8080,
  directRemoteIp: { bytes: [10, 0, 0, 2] },
  remoteIp: { bytes: [10, 0, 0, 2] },
  requestedServerName: '',
  peerCertificate: { uriSans: ['spiffe://cluster.local/ns/a/sa/b'], dnsSans: [], subject: '' },
  headers: new Map([[':method', ['GET']], [':authority', ['httpbin']], [':path', ['/api/v1']]]),
  urlPath: '/api/v1',
  metadata: new Map(),
};
const ENGINE_RUNS = 50_000;
started = nowMs();
for (let i = 0; i < ENGINE_RUNS; i++) for (const engine of rbac) evaluateRbac(engine, attributes);
const engineMs = nowMs() - started;
console.log(row(['measure', 'value']));
console.log(row(['---', '---']));
console.log(row(['policies in the mesh', POLICIES]));
console.log(row(['workloads compiled', targets.length]));
console.log(row(['HTTP RBAC rules emitted (all workloads)', rules]));
console.log(row(['compile 100 workloads (ms)', uncached.ms.toFixed(0)]));
console.log(row(['compile per workload (ms)', (uncached.ms / targets.length).toFixed(2)]));
console.log(row(['compile 100 workloads with PolicyTranslationCache (ms)', cached.ms.toFixed(0)]));
console.log(row(['simulations', SIMULATIONS]));
console.log(row(['simulator decisions per second (full listener path)', Math.round((SIMULATIONS / simulateMs) * 1000)]));
console.log(row(['RBAC engine evaluations per second (busiest workload, ward engine only)', Math.round(((ENGINE_RUNS * rbac.length) / engineMs) * 1000)]));
