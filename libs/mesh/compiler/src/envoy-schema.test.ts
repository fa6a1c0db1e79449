// Every resource the compiler emits must decode strictly against Envoy's own protos (unknown
// fields, wrong types, unknown @type URLs and protoc-gen-validate violations all fail).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkEnvoyMessage, MESSAGE_NAMES, type EnvoyCheckResult } from '@ward/mesh/envoy-api';
import { authorizationPolicyArbitrary, peerAuthenticationArbitrary } from '../test/policy-arbitraries';
import { GOLDEN_CASES, buildGoldenCase } from '../test/golden-cases';
import { compileWorkload } from './compile-workload';
import { HTTPBIN, compileYaml } from './testing';

const BUILDER_DIR = join(import.meta.dirname, '../testdata/istio/pilot/pkg/security/authz/builder/testdata');

function issues(result: EnvoyCheckResult): string[] {
  return result.ok ? [] : result.issues.map((i) => `${i.code} ${i.path}: ${i.message}`);
}

/** JSON round trip: what the compiler hands to a serializer. */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe('istiod golden outputs decode strictly as Envoy filters', () => {
  for (const dir of ['http', 'tcp'] as const) {
    for (const file of readdirSync(join(BUILDER_DIR, dir)).filter((f) => /^(?!extended-).*-out\d*\.yaml$/u.test(f))) {
      it(`${dir}/${file}`, () => {
        const result = checkEnvoyMessage(dir === 'http' ? MESSAGE_NAMES.httpFilter : MESSAGE_NAMES.networkFilter, parse(readFileSync(join(BUILDER_DIR, dir, file), 'utf8')));
        expect(issues(result)).toEqual([]);
        expect(result.uncheckedRules).toEqual([]);
      });
    }
  }
});

describe('compiled golden cases decode strictly', () => {
  for (const dir of ['http', 'tcp'] as const) {
    for (const testCase of GOLDEN_CASES[dir]) {
      it(`${dir} ${testCase.name}`, () => {
        for (const yaml of buildGoldenCase(testCase, dir)) {
          expect(issues(checkEnvoyMessage(dir === 'http' ? MESSAGE_NAMES.httpFilter : MESSAGE_NAMES.networkFilter, parse(yaml)))).toEqual([]);
        }
      });
    }
  }
});

describe('compiled listeners decode strictly', () => {
  const peerAuthn = (mode: string): string => `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\n  namespace: istio-system\nspec:\n  mtls:\n    mode: ${mode}\n`;
  for (const mode of ['STRICT', 'PERMISSIVE', 'DISABLE']) {
    it(`${mode} with HTTP, TCP and sniffed ports`, () => {
      const workload = { ...HTTPBIN, ports: [...HTTPBIN.ports, { port: 7070, protocol: 'UNKNOWN' as const }] };
      const result = checkEnvoyMessage(MESSAGE_NAMES.listener, asJson(compileYaml(peerAuthn(mode), workload).listener));
      expect(issues(result)).toEqual([]);
      expect(result.uncheckedRules).toEqual([]);
    });
  }

  it('rejects a listener the checker must not accept (a broken chain)', () => {
    const listener = asJson(compileYaml('').listener) as { filterChains: Array<{ filterChainMatch: { destinationPort?: number } }> };
    const chain = listener.filterChains[1];
    if (chain === undefined) throw new Error('listener has chains');
    chain.filterChainMatch.destinationPort = 70000;
    expect(issues(checkEnvoyMessage(MESSAGE_NAMES.listener, listener)).join()).toMatch(/ERR_ENVOY_CONSTRAINT \$\.filterChains\[1\]\.filterChainMatch\.destinationPort/u);
  });
});

describe('generated policies compile to schema-valid Envoy config (property)', () => {
  it('every listener built from random policies decodes strictly', () => {
    fc.assert(
      fc.property(fc.array(authorizationPolicyArbitrary(), { maxLength: 4 }), fc.array(peerAuthenticationArbitrary, { maxLength: 3 }), (policies, peerAuthns) => {
        const result = compileWorkload({ workload: { ...HTTPBIN, ports: [...HTTPBIN.ports, { port: 7070, protocol: 'UNKNOWN' }] }, authorizationPolicies: policies, peerAuthentications: peerAuthns });
        expect(result.config).toBeDefined();
        const check = checkEnvoyMessage(MESSAGE_NAMES.listener, asJson(result.config?.listener));
        expect(issues(check)).toEqual([]);
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});
