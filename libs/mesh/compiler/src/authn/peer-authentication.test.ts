import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { PeerAuthentication } from '@ward/mesh/istio-api';
import type { DiagnosticSink } from '../diagnostics';
import { HTTPBIN, resourcesFromYaml } from '../testing';
import { composePeerAuthentication, mtlsModeForPort, type EffectiveMtls } from './peer-authentication';

function pa(name: string, namespace: string, body: string, created = ''): string {
  const ts = created === '' ? '' : `  creationTimestamp: "${created}"\n`;
  return `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n${ts}spec:\n${body}\n---\n`;
}

function compose(yaml: string, sink: DiagnosticSink = []): EffectiveMtls {
  return composePeerAuthentication(resourcesFromYaml(yaml).peerAuthentications, HTTPBIN, 'istio-system', 'default', sink);
}

const STRICT = '  mtls:\n    mode: STRICT';
const DISABLE = '  mtls:\n    mode: DISABLE';
const UNSET = '  mtls: {}';
const SELECT_HTTPBIN = '  selector:\n    matchLabels:\n      app: httpbin\n';

describe('composePeerAuthentication: precedence and inheritance', () => {
  it('defaults to PERMISSIVE without any policy', () => {
    expect(compose('').mode).toBe('PERMISSIVE');
  });
  it('applies a mesh-level STRICT', () => {
    expect(compose(pa('default', 'istio-system', STRICT))).toMatchObject({ mode: 'STRICT', meshPolicy: { namespace: 'istio-system', name: 'default' } });
  });
  it('keeps the mesh STRICT under a namespace policy with mtls UNSET', () => {
    expect(compose(pa('default', 'istio-system', STRICT) + pa('ns', 'foo', UNSET)).mode).toBe('STRICT');
  });
  it('lets namespace DISABLE win over mesh STRICT and survive a workload UNSET', () => {
    expect(compose(pa('default', 'istio-system', STRICT) + pa('ns', 'foo', DISABLE) + pa('w', 'foo', `${SELECT_HTTPBIN}${UNSET}`)).mode).toBe('DISABLE');
  });
  it('picks the oldest of two namespace-level policies and reports the other', () => {
    const sink: DiagnosticSink = [];
    const mtls = compose(pa('b-strict', 'foo', STRICT, '2024-01-01T00:00:00Z') + pa('a-disable', 'foo', DISABLE, '2024-06-01T00:00:00Z'), sink);
    expect(mtls).toMatchObject({ mode: 'STRICT', namespacePolicy: { name: 'b-strict' } });
    expect(sink.map((d) => d.code)).toEqual(['COMPILE_PEER_AUTHN_IGNORED']);
  });
  it('breaks creation-time ties by name', () => {
    expect(compose(pa('b', 'foo', DISABLE, '2024-01-01T00:00:00Z') + pa('a', 'foo', STRICT, '2024-01-01T00:00:00Z')).mode).toBe('STRICT');
  });
  it('ignores a root-namespace policy with a selector (with a warning)', () => {
    const sink: DiagnosticSink = [];
    expect(compose(pa('sel', 'istio-system', `${SELECT_HTTPBIN}${STRICT}`), sink).mode).toBe('PERMISSIVE');
    expect(sink.map((d) => d.code)).toEqual(['COMPILE_PEER_AUTHN_IGNORED']);
  });
  it('ignores policies of other namespaces and selectors that do not match', () => {
    expect(compose(pa('elsewhere', 'bar', STRICT) + pa('other-app', 'foo', `  selector:\n    matchLabels:\n      app: other\n${STRICT}`)).mode).toBe('PERMISSIVE');
  });
  it('resolves port-level modes, UNSET entries inheriting the workload mode', () => {
    const mtls = compose(pa('default', 'istio-system', STRICT) + pa('w', 'foo', `${SELECT_HTTPBIN}  portLevelMtls:\n    8080:\n      mode: DISABLE\n    9000: {}`));
    expect(mtls.perPort).toEqual([[8080, 'DISABLE'], [9000, 'STRICT']]);
    expect(mtlsModeForPort(mtls, 8080)).toBe('DISABLE');
    expect(mtlsModeForPort(mtls, 1234)).toBe('STRICT');
  });
});

// The ambient (ztunnel) testdata converts PeerAuthentications into DENY rules; its per-port
// verdicts for plaintext callers must agree with the sidecar's effective modes: a port rejects
// plaintext iff it is STRICT. An empty conversion means the result is uniform across ports.
const AMBIENT_DIR = join(import.meta.dirname, '../../testdata/istio/pilot/pkg/serviceregistry/ambient/testdata');
const AMBIENT_WORKLOAD = { namespace: 'foo', labels: { app: 'a' }, ports: [] };
const PROBE_PORTS = [8080, 9090, 7070];

interface ConvertedRule {
  readonly matches?: ReadonlyArray<{ destinationPorts?: number[]; notDestinationPorts?: number[]; notPrincipals?: unknown[] }>;
}

/** Would the converted DENY policy deny a plaintext (principal-less) connection to `port`? */
function ambientDeniesPlaintext(converted: { groups?: Array<{ rules?: ConvertedRule[] }> }, port: number): boolean {
  return (converted.groups ?? []).some((group) =>
    (group.rules ?? []).every((rule) =>
      (rule.matches ?? []).some(
        (m) =>
          (m.destinationPorts === undefined || m.destinationPorts.includes(port)) &&
          (m.notDestinationPorts === undefined || !m.notDestinationPorts.includes(port)),
      ),
    ),
  );
}

describe('ambient PeerAuthentication testdata, as far as it applies to sidecars', () => {
  const cases = readdirSync(AMBIENT_DIR).filter((f) => f.endsWith('-in.yaml'));
  it('finds all 19 cases', () => expect(cases.length).toBe(19));
  for (const file of cases) {
    it(`${file.replace('-in.yaml', '')}: strict ports agree`, () => {
      const policies: PeerAuthentication[] = resourcesFromYaml(readFileSync(join(AMBIENT_DIR, file), 'utf8')).peerAuthentications;
      const mtls = composePeerAuthentication(policies, AMBIENT_WORKLOAD, 'istio-system', 'foo', []);
      const strict = PROBE_PORTS.map((port) => mtlsModeForPort(mtls, port) === 'STRICT');
      const converted = parse(readFileSync(join(AMBIENT_DIR, file.replace('-in.yaml', '.yaml')), 'utf8')) as { groups?: [] } | null;
      if (converted === null || converted.groups === undefined) {
        expect(new Set(strict).size, 'an empty conversion means one mode for every port').toBe(1);
      } else {
        expect(strict).toEqual(PROBE_PORTS.map((port) => ambientDeniesPlaintext(converted, port)));
      }
    });
  }
});
