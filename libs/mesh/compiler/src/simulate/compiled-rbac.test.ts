// The compiled RBAC engine against the interpreter it replaced (test/reference-rbac.ts), plus the
// properties the compilation must keep: lazy refusal, leaf sharing, metadata never memoized.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Listener, RBAC } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import { authorizationPolicyArbitrary, trafficArbitrary } from '../../test/policy-arbitraries';
import { evaluateRbacInterpreted } from '../../test/reference-rbac';
import { wardAttributes } from '../../test/rbac-cross-check';
import { compileWorkload } from '../compile-workload';
import { HTTPBIN } from '../testing';
import { compileRbac, evaluateCompiledRbac, type CompiledRbac } from './compiled-rbac';
import { SimulatorError } from './errors';
import type { EngineResult, RbacAttributes } from './rbac-engine';
import { RbacCompiler } from './rule-program';
import { prepareSimulation, simulate } from './simulate';
import type { SimulatedTraffic } from './traffic';

/** The RBAC messages (enforced and shadow, LOG included) of a compiled workload, by protocol. */
function engines(policies: Parameters<typeof compileWorkload>[0]['authorizationPolicies']): Record<'http' | 'tcp', RBAC[]> {
  const config = compileWorkload({ workload: HTTPBIN, authorizationPolicies: policies }).config;
  if (config === undefined) throw new Error('compile failed');
  const collect = (filters: ReadonlyArray<{ typedConfig?: unknown }>): RBAC[] =>
    filters.flatMap((filter) => {
      const typed = (filter.typedConfig ?? {}) as { rules?: RBAC; shadowRules?: RBAC };
      return [typed.rules, typed.shadowRules].filter((rbac): rbac is RBAC => rbac !== undefined);
    });
  return { http: collect(config.httpFilters), tcp: collect(config.networkFilters) };
}

type Outcome = EngineResult | { readonly refused: string };

function outcome(run: () => EngineResult): Outcome {
  try {
    return run();
  } catch (error) {
    if (error instanceof SimulatorError) return { refused: error.code };
    throw error;
  }
}

/** Evaluates the engines of one chain, in order, for one request. */
type ChainEvaluator = (rbacs: readonly RBAC[]) => (attributes: RbacAttributes) => Outcome[];

const interpreted: ChainEvaluator = (rbacs) => (attributes) => rbacs.map((rbac) => outcome(() => evaluateRbacInterpreted(rbac, attributes)));

/** As the simulator runs them: one compiler for the chain's engines, one leaf memo per request. */
const compiled: ChainEvaluator = (rbacs) => {
  const compiler = new RbacCompiler();
  const compiledEngines = rbacs.map((rbac) => compileRbac(rbac, compiler));
  return (attributes) => {
    const memo = compiler.newMemo();
    return compiledEngines.map((engine) => outcome(() => evaluateCompiledRbac(engine, attributes, memo)));
  };
};

/** Compares an engine implementation with the interpreter on a generated corpus; returns mismatches. */
function differences(candidate: ChainEvaluator, seed: number): string[] {
  const mismatches: string[] = [];
  const sets = fc.sample(fc.array(authorizationPolicyArbitrary(['ALLOW', 'DENY', 'AUDIT', 'CUSTOM']), { minLength: 1, maxLength: 4 }), { numRuns: 40, seed });
  const traffic = fc.sample(trafficArbitrary, { numRuns: 60, seed: seed + 1 });
  for (const policies of sets) {
    const byProtocol = engines(policies);
    for (const protocol of ['http', 'tcp'] as const) {
      const want = interpreted(byProtocol[protocol]);
      const got = candidate(byProtocol[protocol]);
      for (const t of traffic) {
        const attributes = wardAttributes(t, protocol);
        const [expected, actual] = [JSON.stringify(want(attributes)), JSON.stringify(got(attributes))];
        if (expected !== actual) mismatches.push(`${expected} != ${actual}`);
      }
    }
  }
  return mismatches;
}

describe('compiled RBAC engine', () => {
  it('decides exactly like the interpreter on generated policies and traffic, leaf memo shared by a chain', () => {
    expect(differences(compiled, 314).slice(0, 3)).toEqual([]);
  });

  it('the comparison catches a wrong engine (policies tried in reverse order)', () => {
    const reverse = (engine: CompiledRbac): CompiledRbac => {
      const roots = new Int32Array(engine.roots.length);
      for (let i = 0; i < engine.roots.length; i += 2) {
        roots[i] = engine.roots[engine.roots.length - 2 - i] as number;
        roots[i + 1] = engine.roots[engine.roots.length - 1 - i] as number;
      }
      return { ...engine, roots, names: [...engine.names].reverse() };
    };
    const reversed: ChainEvaluator = (rbacs) => {
      const broken = rbacs.map((rbac) => reverse(compileRbac(rbac)));
      return (attributes) => broken.map((engine) => outcome(() => evaluateCompiledRbac(engine, attributes)));
    };
    expect(differences(reversed, 314).length).toBeGreaterThan(0);
  });

  it('the comparison catches a stale leaf memo (not cleared between requests)', () => {
    const stale: ChainEvaluator = (rbacs) => {
      const compiler = new RbacCompiler();
      const compiledEngines = rbacs.map((rbac) => compileRbac(rbac, compiler));
      const memo = compiler.newMemo();
      return (attributes) => compiledEngines.map((engine) => outcome(() => evaluateCompiledRbac(engine, attributes, memo)));
    };
    expect(differences(stale, 314).length).toBeGreaterThan(0);
  });

  const attributes: RbacAttributes = {
    destinationIp: { bytes: [10, 0, 0, 1] },
    destinationPort: 8080,
    directRemoteIp: { bytes: [10, 0, 0, 2] },
    remoteIp: { bytes: [10, 0, 0, 2] },
    requestedServerName: '',
    headers: new Map([[':method', ['GET']]]),
    urlPath: '/x',
    metadata: new Map(),
  };
  const unsupported = { permissions: [{ requestedServerName: {} }], principals: [{ any: true }] };
  const any = { permissions: [{ any: true }], principals: [{ any: true }] };

  it('refuses an unsupported matcher only when evaluation reaches it', () => {
    const first = compileRbac({ action: 'DENY', policies: { a: any, b: unsupported } } as RBAC);
    expect(evaluateCompiledRbac(first, attributes)).toEqual({ action: 'DENY', allowed: false, matchedPolicy: 'a' });
    const reached = compileRbac({ action: 'DENY', policies: { a: unsupported, b: any } } as RBAC);
    expect(() => evaluateCompiledRbac(reached, attributes)).toThrow(SimulatorError);
  });

  it('gives identical leaf matchers one slot and computes each once per pass', () => {
    const compiler = new RbacCompiler();
    const get = { header: { name: ':method', stringMatch: { exact: 'GET' } } };
    const engine = compileRbac(
      { action: 'ALLOW', policies: { a: { permissions: [get, { destinationPort: 9 }], principals: [{ any: true }] }, b: { permissions: [get], principals: [{ any: true }] } } } as RBAC,
      compiler,
    );
    expect(compiler.tests).toHaveLength(2);
    const memo = compiler.newMemo();
    expect(evaluateCompiledRbac(engine, attributes, memo)).toEqual({ action: 'ALLOW', allowed: true, matchedPolicy: 'a' });
    expect([...memo]).toEqual([1, 0]);
  });
});

describe('prepared simulation', () => {
  const traffic: SimulatedTraffic = { port: 8080, transport: 'mtls', http: { method: 'GET', path: '/', host: 'h' } };

  it('is prepared once per listener object and gives the same results as before', () => {
    const config = compileWorkload({ workload: HTTPBIN, authorizationPolicies: [] }).config;
    if (config === undefined) throw new Error('compile failed');
    const prepared = prepareSimulation(config);
    expect(prepareSimulation(config.listener)).toBe(prepared);
    expect(simulate(prepared, traffic)).toEqual(simulate(config, traffic));
  });

  it('never memoizes metadata: a later filter sees what an earlier filter wrote in the same pass', () => {
    const any = { permissions: [{ any: true }], principals: [{ any: true }] };
    const readsShadow = {
      permissions: [{ metadata: { filter: FILTER_NAMES.httpRbac, path: [{ key: 'x_shadow_effective_policy_id' }], value: { stringMatch: { exact: 'mark' } } } }],
      principals: [{ any: true }],
    };
    const rbac = (typedConfig: object) => ({ name: FILTER_NAMES.httpRbac, typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC', ...typedConfig } });
    const listener: Listener = {
      name: 'virtualInbound',
      filterChains: [
        {
          name: 'plain',
          filters: [
            {
              name: FILTER_NAMES.httpConnectionManager,
              typedConfig: {
                '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                statPrefix: 'p',
                httpFilters: [
                  rbac({ rules: { action: 'DENY', policies: { first: readsShadow } } }),
                  rbac({ shadowRules: { action: 'DENY', policies: { mark: any } }, shadowRulesStatPrefix: 'x_' }),
                  rbac({ rules: { action: 'DENY', policies: { second: readsShadow } } }),
                  { name: FILTER_NAMES.router },
                ],
              },
            },
          ],
        },
      ],
    } as Listener;
    const result = simulate(listener, { port: 80, transport: 'plaintext', http: { method: 'GET', path: '/', host: 'h' } });
    expect(result.filters.map((f) => f.enforced?.matchedPolicy ?? f.shadow?.matchedPolicy)).toEqual([undefined, 'mark', 'second']);
    expect(result.outcome).toBe('denied');
  });
});
