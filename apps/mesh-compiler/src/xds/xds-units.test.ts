import { buildProxylessInboundListener, planProxylessInboundListener } from '@ward/mesh/compiler';
import { encodeEnvoyMessage, MESSAGE_NAMES, toProtoLoaderObject } from '@ward/mesh/envoy-api';
import { loadResources } from '@ward/mesh/istio-api';
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../http/serve';
import { workloadOfNode } from './node-workload';
import { PolicyStore } from './policy-source';

const DENY = `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: d
  namespace: foo
spec:
  action: DENY
  rules:
  - to:
    - operation:
        paths: ["/x"]
`;

describe('workloadOfNode', () => {
  it('reads istio-agent bootstrap metadata (NAMESPACE, LABELS, POD_PORTS)', () => {
    const node = {
      id: 'sidecar~10.0.0.3~echo-7f.foo~foo.svc.cluster.local',
      metadata: {
        fields: {
          NAMESPACE: { kind: 'stringValue', stringValue: 'bar' },
          LABELS: { kind: 'structValue', structValue: { fields: { app: { kind: 'stringValue', stringValue: 'echo' }, n: { kind: 'numberValue', numberValue: 1 } } } },
          POD_PORTS: { kind: 'stringValue', stringValue: '[{"name":"grpc","containerPort":50051,"protocol":"TCP"},{"containerPort":50051},{"containerPort":0},{"containerPort":"x"}]' },
        },
      },
    };
    expect(workloadOfNode(node)).toEqual({ name: 'echo-7f', namespace: 'bar', labels: { app: 'echo' }, ports: [{ port: 50051, protocol: 'GRPC', name: 'grpc' }] });
  });

  it('falls back to the node id, then to default, and ignores malformed metadata', () => {
    expect(workloadOfNode({ id: 'sidecar~10.0.0.3~echo.baz~baz.svc.cluster.local' })).toMatchObject({ name: 'echo', namespace: 'baz', labels: {}, ports: [] });
    expect(workloadOfNode({ id: 'plain' })).toMatchObject({ name: 'plain', namespace: 'default' });
    expect(workloadOfNode({ metadata: { fields: { POD_PORTS: { kind: 'stringValue', stringValue: '{not json' }, LABELS: { kind: 'stringValue', stringValue: 'x' } } } })).toMatchObject({ namespace: 'default', labels: {}, ports: [] });
  });
});

describe('parseServeArgs', () => {
  it('accepts --xds and --policies, refuses the rest', () => {
    expect(parseServeArgs([])).toEqual({});
    expect(parseServeArgs(['--xds', '127.0.0.1:15010', '--policies', 'p/'])).toEqual({ xds: '127.0.0.1:15010', policies: 'p/' });
    expect(parseServeArgs(['--xds=[::1]:0'])).toEqual({ xds: '[::1]:0' });
    expect(parseServeArgs(['--policies', 'p/'])).toBe('serve: --policies needs --xds');
    expect(parseServeArgs(['--xds', 'nohost'])).toContain('--xds takes host:port');
    expect(parseServeArgs(['--xds', 'a:70000'])).toContain('--xds takes host:port');
    expect(parseServeArgs(['--xds'])).toBe('serve: --xds needs a value');
    expect(parseServeArgs(['x'])).toContain('unknown argument');
  });

  it('takes the ADS mTLS files all together, and only with --xds', () => {
    expect(parseServeArgs(['--xds', '127.0.0.1:0', '--xds-tls-cert', 'c.pem', '--xds-tls-key=k.pem', '--xds-tls-ca', 'ca.pem'])).toEqual({ xds: '127.0.0.1:0', tls: { cert: 'c.pem', key: 'k.pem', ca: 'ca.pem' } });
    expect(parseServeArgs(['--xds', '127.0.0.1:0', '--xds-tls-cert', 'c.pem', '--xds-tls-key', 'k.pem'])).toBe('serve: mTLS for ADS needs all of --xds-tls-cert, --xds-tls-key and --xds-tls-ca');
    expect(parseServeArgs(['--xds-tls-cert', 'c.pem', '--xds-tls-key', 'k.pem', '--xds-tls-ca', 'ca.pem'])).toBe('serve: --xds-tls-cert, --xds-tls-key and --xds-tls-ca need --xds');
    expect(parseServeArgs(['--xds', '127.0.0.1:0', '--xds-tls-ca'])).toBe('serve: --xds-tls-ca needs a value');
  });
});

describe('PolicyStore', () => {
  it('accepts a valid set with a new version, keeps the last good one on an invalid change, and does not bump the version for the same text', () => {
    const store = new PolicyStore();
    const first = store.apply([{ sourceName: 'a.yaml', text: DENY }], []);
    expect(first).toMatchObject({ accepted: true, unchanged: false });
    expect(store.snapshot.version).toBe('1');
    expect(store.snapshot.authorizationPolicies.map((p) => p.metadata.name)).toEqual(['d']);
    const bad = store.apply([{ sourceName: 'a.yaml', text: DENY.replace('paths: ["/x"]', 'methods: [""]') }], []);
    expect(bad.accepted).toBe(false);
    expect(bad.report).toContain('Error: 1 error occurred');
    expect(bad.report).toContain('a.yaml');
    expect(store.snapshot.version).toBe('1');
    expect(store.snapshot.authorizationPolicies.map((p) => p.metadata.name)).toEqual(['d']);
    expect(store.apply([{ sourceName: 'a.yaml', text: DENY }], [])).toMatchObject({ accepted: true, unchanged: true });
    expect(store.snapshot.version).toBe('1');
    // Emptied: taken for a write in progress; a comment (or deleting the file) removes the policies.
    const emptied = store.apply([{ sourceName: 'a.yaml', text: '\n' }], []);
    expect(emptied.accepted).toBe(false);
    expect(emptied.report).toContain('a.yaml: empty, but it held policies');
    expect(store.snapshot.version).toBe('1');
    expect(store.apply([{ sourceName: 'a.yaml', text: '# none\n' }], [])).toMatchObject({ accepted: true, unchanged: false });
    expect(store.snapshot.authorizationPolicies).toEqual([]);
    expect(store.apply([], [])).toMatchObject({ accepted: true, unchanged: false });
  });

  it('refuses YAML that does not parse and inputs that could not be read', () => {
    const store = new PolicyStore();
    expect(store.apply([{ sourceName: 'b.yaml', text: 'kind: [' }], []).accepted).toBe(false);
    expect(store.apply([], [{ code: 'MESH_INPUT_UNREADABLE', severity: 'error', origin: 'load', message: 'cannot read', sourceName: 'c.yaml', position: { line: 1, column: 1 } }]).accepted).toBe(false);
    expect(store.snapshot.version).toBe('0');
  });
});

describe('listener encoding by concatenation', () => {
  it('name + address encoded apart, then the shared filter chains, decode to the listener built whole', () => {
    const policies = loadResources(DENY, { sourceName: 'd.yaml' }).resources.map((r) => r.resource).filter((r) => r.kind === 'AuthorizationPolicy');
    const input = { listenerName: 'xds.istio.io/grpc/lds/inbound/10.1.2.3:50051', workload: { namespace: 'foo', labels: {}, ports: [] }, authorizationPolicies: policies, peerAuthentications: [] } as const;
    const whole = encodeEnvoyMessage(MESSAGE_NAMES.listener, buildProxylessInboundListener(input).listener);
    const plan = planProxylessInboundListener(input);
    if (plan.kind !== 'listener' || !whole.ok) throw new Error('no listener');
    const chains = encodeEnvoyMessage(MESSAGE_NAMES.listener, { filterChains: plan.buildFilterChains().filterChains });
    const head = encodeEnvoyMessage(MESSAGE_NAMES.listener, { name: input.listenerName, address: { socketAddress: { address: plan.host, portValue: plan.port } } });
    if (!chains.ok || !head.ok) throw new Error('not encodable');
    const joined = Buffer.concat([head.bytes, chains.bytes]);
    expect(toProtoLoaderObject(MESSAGE_NAMES.listener, joined)).toEqual(toProtoLoaderObject(MESSAGE_NAMES.listener, whole.bytes));
    expect(plan.chainKey).toBe('DISABLE|deny:foo/d|allow:');
  });
});
