// ward's RBAC engine against the independent one in @grpc/grpc-js-xds, on a generated corpus from
// which the documented differences (spec §6.5 plus those found here) are excluded; each
// difference then has its own test showing both engines disagree exactly as documented.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RBAC } from '@ward/mesh/envoy-api';
import { authorizationPolicyArbitrary, trafficArbitrary } from '../../test/policy-arbitraries';
import { crossCheck, grpcEngine, grpcInfo, wardAttributes } from '../../test/rbac-cross-check';
import { compileWorkload } from '../compile-workload';
import { HTTPBIN } from '../testing';
import { evaluateRbac } from './rbac-engine';
import type { SimulatedTraffic } from './traffic';

const CORPUS_POLICY_SETS = 40;
const TRAFFIC_PER_SET = 60;

/** Policies without path templates (grpc-js-xds never matches uri_template). */
const policySetArbitrary = fc.array(authorizationPolicyArbitrary(['ALLOW', 'DENY']), { minLength: 1, maxLength: 3 }).filter((set) => !JSON.stringify(set).includes('{*'));

/** Traffic without SNI, without a separate remote address and without JWT metadata. */
const comparableTraffic = trafficArbitrary.map((t): SimulatedTraffic => {
  const { sni: _sni, remoteIp: _remote, http, ...rest } = t;
  if (http === undefined) return rest;
  const { requestPrincipal: _principal, jwtClaims: _claims, ...request } = http;
  return { ...rest, http: request };
});

describe('cross-check against @grpc/grpc-js-xds RBAC', () => {
  it(`agrees on a corpus of ${CORPUS_POLICY_SETS} policy sets × ${TRAFFIC_PER_SET} requests`, () => {
    const sets = fc.sample(policySetArbitrary, { numRuns: CORPUS_POLICY_SETS, seed: 20260822 });
    const traffic = fc.sample(comparableTraffic, { numRuns: CORPUS_POLICY_SETS * TRAFFIC_PER_SET, seed: 42 });
    let decisions = 0;
    let denied = 0;
    const mismatches: string[] = [];
    sets.forEach((policies, setIndex) => {
      const config = compileWorkload({ workload: HTTPBIN, authorizationPolicies: policies }).config;
      if (config === undefined) throw new Error('compile failed');
      for (const t of traffic.slice(setIndex * TRAFFIC_PER_SET, (setIndex + 1) * TRAFFIC_PER_SET)) {
        for (const outcome of crossCheck(config, t)) {
          decisions++;
          if (!outcome.ward) denied++;
          if (outcome.ward !== outcome.grpc) mismatches.push(`${outcome.label} ward=${outcome.ward} grpc=${outcome.grpc} ${JSON.stringify(t)}`);
        }
      }
    });
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(decisions).toBeGreaterThan(3000);
    expect(denied / decisions).toBeGreaterThan(0.1);
    expect(denied / decisions).toBeLessThan(0.9);
  });
});

function policy(permissions: unknown[], principals: unknown[] = [{ any: true }]): RBAC {
  return { policies: { p: { permissions, principals } } } as RBAC;
}

const HTTP_GET: SimulatedTraffic = { port: 8080, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/a/sa/b', http: { method: 'GET', path: '/t/a', host: 'h' } };

function both(rbac: RBAC, traffic: SimulatedTraffic, protocol: 'http' | 'tcp' = 'http'): { ward: boolean; grpc: boolean } {
  return { ward: evaluateRbac(rbac, wardAttributes(traffic, protocol)).allowed, grpc: grpcEngine(rbac).apply(grpcInfo(traffic, protocol)) };
}

describe('documented differences of grpc-js-xds', () => {
  it('uri_template never matches in grpc-js-xds', () => {
    const rbac = policy([{ uriTemplate: { name: 'uri-template', typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig', pathTemplate: '/t/*' } } }]);
    expect(both(rbac, HTTP_GET)).toEqual({ ward: true, grpc: false });
  });
  it('requested_server_name is matched against "" in grpc-js-xds', () => {
    const rbac = policy([{ requestedServerName: { exact: 'db.svc' } }]);
    expect(both(rbac, { ...HTTP_GET, sni: 'db.svc' }, 'tcp')).toEqual({ ward: true, grpc: false });
  });
  it('remote_ip is the direct peer in grpc-js-xds', () => {
    const rbac = policy([{ any: true }], [{ remoteIp: { addressPrefix: '10.0.0.0', prefixLen: 8 } }]);
    expect(both(rbac, { ...HTTP_GET, sourceIp: '192.168.0.1', remoteIp: '10.1.2.3' })).toEqual({ ward: true, grpc: false });
  });
  it('metadata (JWT) principals never match in grpc-js-xds', () => {
    const rbac = policy([{ any: true }], [{ metadata: { filter: 'envoy.filters.http.jwt_authn', path: [{ key: 'payload' }, { key: 'iss' }], value: { stringMatch: { exact: 'iss' } } } }]);
    const attributes = wardAttributes(HTTP_GET, 'http');
    attributes.metadata.set('envoy.filters.http.jwt_authn', { payload: { iss: 'iss' } });
    expect({ ward: evaluateRbac(rbac, attributes).allowed, grpc: grpcEngine(rbac).apply(grpcInfo(HTTP_GET, 'http')) }).toEqual({ ward: true, grpc: false });
  });
  it('found here: grpc-js-xds does not mask the CIDR address (Envoy does)', () => {
    const rbac = policy([{ any: true }], [{ directRemoteIp: { addressPrefix: '10.1.2.3', prefixLen: 8 } }]);
    expect(both(rbac, { ...HTTP_GET, sourceIp: '10.9.9.9' })).toEqual({ ward: true, grpc: false });
  });
  it('found here: grpc-js-xds falls back to the subject CN even when URI SANs exist', () => {
    const rbac = policy([{ any: true }], [{ authenticated: { principalName: { exact: 'spiffe://x' } } }]);
    const traffic: SimulatedTraffic = { ...HTTP_GET, peerCertificate: { uriSans: ['spiffe://y'], subject: 'spiffe://x' } };
    expect(both(rbac, traffic)).toEqual({ ward: false, grpc: true });
  });
  it('grpc-js-xds refuses action LOG', () => {
    expect(() => grpcEngine({ action: 'LOG', policies: {} })).toThrow(/LOG/u);
  });
});
