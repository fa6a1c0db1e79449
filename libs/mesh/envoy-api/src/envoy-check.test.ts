import { describe, expect, it } from 'vitest';
import { checkEnvoyAny, checkEnvoyMessage, toProtoLoaderObject } from './envoy-check';
import { MESSAGE_NAMES, TYPE_URLS } from './type-urls';

const denyFilter = {
  name: 'envoy.filters.http.rbac',
  typedConfig: {
    '@type': TYPE_URLS.httpRbac,
    rules: {
      action: 'DENY',
      policies: {
        'ns[foo]-policy[p]-rule[0]': {
          permissions: [{ andRules: { rules: [{ header: { name: ':method', stringMatch: { exact: 'GET' } } }] } }],
          principals: [{ andIds: { ids: [{ authenticated: { principalName: { safeRegex: { regex: '.+' } } } }] } }],
        },
      },
    },
    shadowRulesStatPrefix: 'istio_dry_run_allow_',
  },
};

function withPermission(permission: unknown): unknown {
  return { action: 'DENY', policies: { p: { permissions: [permission], principals: [{ any: true }] } } };
}

function codesAndPaths(result: ReturnType<typeof checkEnvoyMessage>): string[] {
  return result.ok ? [] : result.issues.map((i) => `${i.code} ${i.path}`);
}

describe('checkEnvoyMessage', () => {
  it('accepts an istiod-shaped HTTP RBAC filter and encodes it', () => {
    const result = checkEnvoyMessage(MESSAGE_NAMES.httpFilter, denyFilter);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.bytes.length).toBeGreaterThan(50);
    expect(result.warnings).toEqual([]);
  });

  it('rejects an unknown field with its path', () => {
    const bad = structuredClone(denyFilter) as unknown as { typedConfig: { rules: { policies: Record<string, Record<string, unknown>> } } };
    const policy = bad.typedConfig.rules.policies['ns[foo]-policy[p]-rule[0]'];
    if (policy === undefined) throw new Error('fixture has the policy');
    policy['permisions'] = [];
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.httpFilter, bad))).toEqual([
      'ERR_ENVOY_UNKNOWN_FIELD $.typedConfig.rules.policies["ns[foo]-policy[p]-rule[0]"].permisions',
    ]);
  });

  it('rejects a wrong JSON type, a null and an unknown enum name', () => {
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({ destinationPort: '80x' })))).toEqual([
      'ERR_ENVOY_WRONG_TYPE $.policies.p.permissions[0].destinationPort',
    ]);
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({ destinationPort: null })))).toContain(
      'ERR_ENVOY_WRONG_TYPE $.policies.p.permissions[0].destinationPort',
    );
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, { action: 'PERMIT' }))).toEqual(['ERR_ENVOY_UNKNOWN_ENUM_VALUE $.action']);
  });

  it('rejects two members of one oneof and an empty required oneof', () => {
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({ any: true, destinationPort: 80 })))).toEqual([
      'ERR_ENVOY_ONEOF_CONFLICT $.policies.p.permissions[0]',
    ]);
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({})))).toEqual([
      'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0]',
    ]);
  });

  it('enforces protoc-gen-validate rules Envoy applies on load', () => {
    const cases: Array<[unknown, string]> = [
      [{ destinationPort: 70000 }, 'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0].destinationPort'],
      [{ any: false }, 'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0].any'],
      [{ header: { name: '', presentMatch: true } }, 'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0].header.name'],
      [{ header: { name: 'a\nb', presentMatch: true } }, 'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0].header.name'],
      [{ urlPath: {} }, 'ERR_ENVOY_CONSTRAINT $.policies.p.permissions[0].urlPath'],
    ];
    for (const [permission, expected] of cases) {
      expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission(permission)))).toContain(expected);
    }
  });

  it('decodes Any payloads by type URL and rejects unknown URLs', () => {
    const template = {
      uriTemplate: {
        name: 'uri-template',
        typedConfig: { '@type': TYPE_URLS.uriTemplateMatch, pathTemplate: '/a/*' },
      },
    };
    expect(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission(template)).ok).toBe(true);
    const unknownUrl = { uriTemplate: { name: 'x', typedConfig: { '@type': 'type.googleapis.com/no.Such' } } };
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission(unknownUrl)))).toEqual([
      'ERR_ENVOY_UNKNOWN_TYPE_URL $.policies.p.permissions[0].uriTemplate.typedConfig["@type"]',
    ]);
    const badPayload = { uriTemplate: { name: 'x', typedConfig: { '@type': TYPE_URLS.uriTemplateMatch, path: '/a' } } };
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission(badPayload)))).toContain(
      'ERR_ENVOY_UNKNOWN_FIELD $.policies.p.permissions[0].uriTemplate.typedConfig.path',
    );
  });

  it('checks durations', () => {
    const ok = { '@type': TYPE_URLS.httpExtAuthz, grpcService: { envoyGrpc: { clusterName: 'c' }, timeout: '0.002s' }, transportApiVersion: 'V3' };
    expect(checkEnvoyAny(ok).ok).toBe(true);
    const bad = { ...ok, grpcService: { envoyGrpc: { clusterName: 'c' }, timeout: '2ms' } };
    expect(codesAndPaths(checkEnvoyAny(bad))).toEqual(['ERR_ENVOY_WRONG_TYPE $.grpcService.timeout']);
  });

  it('warns on deprecated fields', () => {
    const result = checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({ header: { name: 'x', exactMatch: 'y' } }));
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.field)).toEqual(['envoy.config.route.v3.HeaderMatcher.exact_match']);
  });

  it('stops at the depth limit instead of recursing without bound', () => {
    let permission: unknown = { any: true };
    for (let i = 0; i < 200; i++) permission = { notRule: permission };
    expect(codesAndPaths(checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission(permission))).some((c) => c.startsWith('ERR_ENVOY_TOO_DEEP'))).toBe(true);
  });

  it('gives the proto-loader object form used by grpc-js-xds', () => {
    const result = checkEnvoyMessage(MESSAGE_NAMES.rbac, withPermission({ destinationPort: 8080 }));
    if (!result.ok) throw new Error('expected ok');
    const object = toProtoLoaderObject(MESSAGE_NAMES.rbac, result.bytes) as {
      action: string;
      policies: Record<string, { permissions: Array<{ rule: string; destination_port: number }> }>;
    };
    expect(object.action).toBe('DENY');
    expect(object.policies['p']?.permissions[0]).toMatchObject({ rule: 'destination_port', destination_port: 8080 });
  });

  it('refuses to check a message name it does not know', () => {
    expect(() => checkEnvoyMessage('envoy.no.Such', {})).toThrow(TypeError);
  });
});
