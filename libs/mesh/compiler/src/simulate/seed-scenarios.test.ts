// The production accidents of the design notes, replayed on compiled configuration.
import { describe, expect, it } from 'vitest';
import type { HttpConnectionManager, Listener } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import { HTTPBIN, compileYaml, policyYaml } from '../testing';
import { simulate } from './simulate';
import type { SimulatedTraffic } from './traffic';

const FROM_A = 'cluster.local/ns/a/sa/client';
const STAT = 'http.inbound_0.0.0.0_8080;.rbac.';

function rbacStats(result: { stats: readonly string[] }): string[] {
  return result.stats.filter((stat) => stat.includes('.rbac.'));
}

function get(path: string, principal = FROM_A): SimulatedTraffic {
  return { port: 8080, transport: 'mtls', sourcePrincipal: principal, http: { method: 'GET', path, host: 'httpbin.foo' } };
}

const ALLOW_API = policyYaml('allow-api', '  action: ALLOW\n  rules:\n  - from:\n    - source:\n        namespaces: ["a"]\n    to:\n    - operation:\n        paths: ["/api/*"]');
const DENY_ADMIN = policyYaml('deny-admin', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["/admin*"]');

/** Rewrites every HCM's HTTP filter list of a listener (for order/removal experiments). */
function mapHttpFilters(listener: Listener, change: (filters: NonNullable<HttpConnectionManager['httpFilters']>) => HttpConnectionManager['httpFilters']): Listener {
  return {
    ...listener,
    filterChains: (listener.filterChains ?? []).map((chain) => ({
      ...chain,
      filters: (chain.filters ?? []).map((filter) => {
        if (filter.name !== FILTER_NAMES.httpConnectionManager) return filter;
        const hcm = filter.typedConfig as unknown as HttpConnectionManager & { '@type': string };
        return { ...filter, typedConfig: { ...hcm, httpFilters: change([...(hcm.httpFilters ?? [])]) } };
      }),
    })),
  };
}

describe('one ALLOW policy turns everything else into 403', () => {
  it('without ALLOW policies everything is allowed and no RBAC filter exists', () => {
    const config = compileYaml('');
    expect(config.httpFilters).toEqual([]);
    const result = simulate(config, get('/healthz'));
    expect(result.outcome).toBe('allowed');
    expect(result.decision.reason).toMatch(/no enforcing authorization filter/u);
  });

  it('after adding one ALLOW for /api/*, a health check gets 403 "RBAC: access denied"', () => {
    const config = compileYaml(ALLOW_API);
    const health = simulate(config, get('/healthz'));
    expect(health.outcome).toBe('denied');
    expect(health.httpResponse).toEqual({ status: 403, body: 'RBAC: access denied', responseCodeDetails: 'rbac_access_denied_matched_policy[none]' });
    expect(health.decision).toMatchObject({ filterName: 'envoy.filters.http.rbac', action: 'ALLOW', reason: 'no ALLOW policy matched' });
    expect(health.stats).toContain(`${STAT}denied`);
    const api = simulate(config, get('/api/v1'));
    expect(api.outcome).toBe('allowed');
    expect(api.decision).toMatchObject({ action: 'ALLOW', policy: 'ns[foo]-policy[allow-api]-rule[0]' });
    expect(simulate(config, get('/api/v1', 'cluster.local/ns/b/sa/client')).outcome).toBe('denied');
  });
});

describe('a path-only DENY cuts every TCP connection', () => {
  it('denies /admin and /administrator over HTTP but allows other paths', () => {
    const config = compileYaml(DENY_ADMIN);
    for (const path of ['/admin', '/administrator', '/admin/x?y=1']) {
      const result = simulate(config, get(path));
      expect(result.outcome, path).toBe('denied');
      expect(result.httpResponse?.responseCodeDetails).toBe('rbac_access_denied_matched_policy[ns[foo]-policy[deny-admin]-rule[0]]');
    }
    expect(simulate(config, get('/index.html')).outcome).toBe('allowed');
  });

  it('closes every TCP connection to port 9000 because the rule widens to match-all on TCP', () => {
    const config = compileYaml(DENY_ADMIN);
    const tcp = simulate(config, { port: 9000, transport: 'mtls', sourcePrincipal: FROM_A });
    expect(tcp.outcome).toBe('denied');
    expect(tcp.chain?.kind).toBe('TCP');
    expect(tcp.connectionTerminationDetails).toBe('rbac_access_denied_matched_policy[ns[foo]-policy[deny-admin]-rule[0]]');
    expect(tcp.stats).toContain('tcp.rbac.denied');
    expect(tcp.httpResponse).toBeUndefined();
  });

  it('scoping the DENY to port 8080 spares TCP port 9000', () => {
    const scoped = policyYaml('deny-admin', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["/admin*"]\n        ports: ["8080"]');
    const config = compileYaml(scoped);
    expect(simulate(config, { port: 9000, transport: 'mtls', sourcePrincipal: FROM_A }).outcome).toBe('allowed');
    expect(simulate(config, get('/admin')).outcome).toBe('denied');
  });
});

describe('the RBAC filters are chained: order changes stats, not decisions', () => {
  const config = compileYaml(DENY_ADMIN + ALLOW_API);
  const swapped = mapHttpFilters(config.listener, (filters) => {
    const router = filters.pop();
    return [...filters.reverse(), ...(router !== undefined ? [router] : [])];
  });

  it('emits DENY before ALLOW', () => {
    expect(config.httpFilters.map((f) => (f.typedConfig as { rules?: { action?: string } }).rules?.action ?? 'ALLOW')).toEqual(['DENY', 'ALLOW']);
  });

  it('gives the same decision for every request in either order', () => {
    for (const traffic of [get('/api/x'), get('/admin'), get('/healthz'), get('/api/x', 'cluster.local/ns/b/sa/c')]) {
      expect(simulate(swapped, traffic).outcome).toBe(simulate(config, traffic).outcome);
    }
  });

  it('bumps different counters: an ALLOW miss passes the DENY filter first in one order only', () => {
    expect(rbacStats(simulate(config, get('/healthz')))).toEqual([`${STAT}allowed`, `${STAT}denied`]);
    expect(rbacStats(simulate(swapped, get('/healthz')))).toEqual([`${STAT}denied`]);
  });
});

describe('removing the ALLOW filter', () => {
  it('lets through what the ALLOW filter used to reject', () => {
    const config = compileYaml(DENY_ADMIN + ALLOW_API);
    const withoutAllow = mapHttpFilters(config.listener, (filters) =>
      filters.filter((f) => f.name !== FILTER_NAMES.httpRbac || (f.typedConfig as { rules?: { action?: string } }).rules?.action === 'DENY'),
    );
    expect(simulate(config, get('/healthz')).outcome).toBe('denied');
    expect(simulate(withoutAllow, get('/healthz')).outcome).toBe('allowed');
    expect(simulate(withoutAllow, get('/admin')).outcome).toBe('denied');
  });
});

describe('moving a DENY to shadow rules (dry-run)', () => {
  const dryRun = policyYaml('deny-admin', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["/admin*"]', '  annotations:\n    istio.io/dry-run: "true"\n');
  const config = compileYaml(dryRun);

  it('never rejects but records what it would have done', () => {
    const result = simulate(config, get('/admin'));
    expect(result.outcome).toBe('allowed');
    expect(rbacStats(result)).toEqual([`${STAT}istio_dry_run_deny_shadow_denied`]);
    expect(result.dynamicMetadata['envoy.filters.http.rbac']).toEqual({
      istio_dry_run_deny_shadow_effective_policy_id: 'ns[foo]-policy[deny-admin]-rule[0]',
      istio_dry_run_deny_shadow_engine_result: 'denied',
    });
    expect(result.filters[0]?.shadow).toMatchObject({ allowed: false, matchedPolicy: 'ns[foo]-policy[deny-admin]-rule[0]' });
  });

  it('counts shadow_allowed for requests the DENY would not match', () => {
    expect(rbacStats(simulate(config, get('/ok')))).toEqual([`${STAT}istio_dry_run_deny_shadow_allowed`]);
  });
});

describe('STRICT, PERMISSIVE and a DISABLE port exception for plaintext and mTLS callers', () => {
  const strictMesh = 'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\n  namespace: istio-system\nspec:\n  mtls:\n    mode: STRICT\n---\n';
  const portException =
    'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: httpbin\n  namespace: foo\nspec:\n  selector:\n    matchLabels:\n      app: httpbin\n  portLevelMtls:\n    8080:\n      mode: DISABLE\n---\n';
  const plaintext = (port: number): SimulatedTraffic => ({ port, transport: 'plaintext', http: { method: 'GET', path: '/', host: 'httpbin' } });
  const mtls = (port: number): SimulatedTraffic => ({ port, transport: 'mtls', sourcePrincipal: FROM_A, http: { method: 'GET', path: '/', host: 'httpbin' } });

  it('PERMISSIVE (no policy) accepts both', () => {
    const config = compileYaml('');
    expect(simulate(config, plaintext(8080))).toMatchObject({ outcome: 'allowed', chain: { mtls: false, transportProtocol: 'raw_buffer' } });
    expect(simulate(config, mtls(8080))).toMatchObject({ outcome: 'allowed', chain: { mtls: true }, peerPrincipal: `spiffe://${FROM_A}` });
  });

  it('STRICT resets plaintext callers with no_filter_chain_match, on declared and undeclared ports', () => {
    const config = compileYaml(strictMesh);
    for (const port of [8080, 9000, 7777]) {
      const result = simulate(config, plaintext(port));
      expect(result.outcome, String(port)).toBe('reset');
      expect(result.stats).toEqual(['listener.0.0.0.0_15006.no_filter_chain_match']);
      expect(result.httpResponse).toBeUndefined();
    }
    expect(simulate(config, mtls(8080)).outcome).toBe('allowed');
  });

  it('a DISABLE exception on 8080 takes plaintext there, breaks mTLS there, keeps 9000 strict', () => {
    const config = compileYaml(strictMesh + portException);
    expect(simulate(config, plaintext(8080))).toMatchObject({ outcome: 'allowed', chain: { name: '0.0.0.0_8080', mtls: false } });
    expect(simulate(config, mtls(8080)).outcome).toBe('protocol-error');
    expect(simulate(config, { port: 9000, transport: 'plaintext' }).outcome).toBe('reset');
    expect(simulate(config, { port: 9000, transport: 'mtls', sourcePrincipal: FROM_A }).outcome).toBe('allowed');
  });

  it('STRICT refuses a client without a certificate or with an untrusted one', () => {
    const config = compileYaml(strictMesh);
    expect(simulate(config, { ...mtls(8080), peerCertificate: null }).outcome).toBe('tls-handshake-failed');
    const untrusted = simulate(config, { ...mtls(8080), peerCertificate: { uriSans: [`spiffe://${FROM_A}`], trusted: false } });
    expect(untrusted.outcome).toBe('tls-handshake-failed');
    expect(untrusted.stats).toContain('listener.0.0.0.0_15006.ssl.fail_verify_error');
  });
});

describe('the principal comes from the SPIFFE URI SAN', () => {
  const allowB = policyYaml('allow-b', '  rules:\n  - from:\n    - source:\n        principals: ["cluster.local/ns/a/sa/b"]');

  it('matches the SAN with spiffe:// removed from the policy value', () => {
    const config = compileYaml(allowB);
    const ok = simulate(config, { ...get('/'), peerCertificate: { uriSans: ['spiffe://cluster.local/ns/a/sa/b'] } });
    expect(ok).toMatchObject({ outcome: 'allowed', peerPrincipal: 'spiffe://cluster.local/ns/a/sa/b', decision: { policy: 'ns[foo]-policy[allow-b]-rule[0]' } });
    expect(simulate(config, get('/', 'cluster.local/ns/a/sa/c')).outcome).toBe('denied');
    expect(simulate(config, { port: 8080, transport: 'plaintext', http: { method: 'GET', path: '/', host: 'h' } }).outcome).toBe('denied');
  });

  it('rejects a peer from another trust domain at the handshake', () => {
    const config = compileYaml(allowB, HTTPBIN, { trustDomain: 'td1' });
    const result = simulate(config, get('/', 'cluster.local/ns/a/sa/b'));
    expect(result.outcome).toBe('tls-handshake-failed');
    expect(result.stats).toContain('listener.0.0.0.0_15006.ssl.fail_verify_san');
    expect(simulate(config, get('/', 'td1/ns/a/sa/b')).outcome).toBe('allowed');
  });
});
