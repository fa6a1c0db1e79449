// Checks of infra/docker-compose.yml beyond the compose specification: every environment
// variable a service gets is an option of its app's config schema (and the values pass that
// schema), ports do not collide, dependencies exist, raft-node data lives in volumes, the
// cluster wiring agrees with itself, the verifier tier can scale, and the Dockerfile builds
// every app the services run.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig, type ConfigSchema } from '@ward/platform/config';

export interface ComposeService {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, string>>;
  readonly ports?: readonly string[];
  readonly volumes?: readonly string[];
  readonly depends_on?: Readonly<Record<string, { condition: string }>> | readonly string[];
  readonly container_name?: string;
  readonly secrets?: readonly string[];
  readonly healthcheck?: { readonly test?: readonly string[] };
}

export interface ComposeFile {
  readonly services: Readonly<Record<string, ComposeService>>;
  readonly volumes?: Readonly<Record<string, unknown>>;
  readonly secrets?: Readonly<Record<string, { readonly file?: string }>>;
}

/** Where compose mounts a service's secret. */
const SECRETS_DIR = '/run/secrets/';
/** The image's entry point sets NAME from the file NAME_FROM_FILE names (infra/docker-entrypoint.sh). */
const FROM_FILE = '_FROM_FILE';
/** Options that carry key material: they may only come from a secret file. */
const SECRET_OPTION = /(PAYLOAD_KEYS|PRIVATE_KEY|PASSWORD|SECRET)$/;

/** The app a service runs: `node dist/apps/<app>/main.js ...`, or undefined (e.g. redis). */
export function appOf(service: ComposeService): string | undefined {
  const command = service.command ?? [];
  const match = command[0] === 'node' ? /^dist\/apps\/([a-z-]+)\/main\.js$/.exec(command[1] ?? '') : null;
  return match?.[1];
}

/** Finds the ConfigSchema an app's src/config.ts exports (the one object with prefix + options). */
export async function loadAppConfigSchema(workspaceRoot: string, app: string): Promise<ConfigSchema> {
  const file = join(workspaceRoot, 'apps', app, 'src', 'config.ts');
  if (!existsSync(file)) throw new Error(`apps/${app}/src/config.ts does not exist`);
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const schemas = Object.values(module).filter(
    (value): value is ConfigSchema => typeof value === 'object' && value !== null && 'prefix' in value && 'options' in value,
  );
  if (schemas.length !== 1) throw new Error(`apps/${app}/src/config.ts exports ${schemas.length} config schemas, expected 1`);
  return schemas[0] as ConfigSchema;
}

/** Environment variables of every service must be known options whose values the app accepts. */
export function checkEnvironment(
  name: string,
  service: ComposeService,
  schema: ConfigSchema,
  secretValues: Readonly<Record<string, string>> = {},
): string[] {
  const problems: string[] = [];
  const env: Record<string, string> = {};
  for (const [variable, value] of Object.entries(service.environment ?? {})) {
    if (!variable.startsWith(`${schema.prefix}_`)) problems.push(`${name}: ${variable} is not a ${schema.prefix}_* option`);
    if (!variable.endsWith(FROM_FILE)) {
      env[variable] = value;
      continue;
    }
    // NAME_FROM_FILE: the option is NAME, its value the content of the secret the path names.
    const secret = value.startsWith(SECRETS_DIR) ? value.slice(SECRETS_DIR.length) : undefined;
    if (secret === undefined || !(service.secrets ?? []).includes(secret)) problems.push(`${name}: ${variable} does not name one of its secrets under ${SECRETS_DIR}`);
    else env[variable.slice(0, -FROM_FILE.length)] = secretValues[secret] ?? '';
  }
  try {
    loadConfig(schema, env);
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
  }
  return problems;
}

/** `[ip:]host:container[/proto]` -> host port; undefined for a container-only port. */
function hostPort(spec: string): string | undefined {
  const parts = spec.split('/')[0]!.split(':');
  if (parts.length < 2) return undefined;
  return `${parts.length === 3 ? parts[0] : '0.0.0.0'}:${parts[parts.length - 2]}`;
}

export function checkPorts(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [name, service] of Object.entries(compose.services)) {
    for (const spec of service.ports ?? []) {
      const port = hostPort(spec);
      if (port === undefined) continue;
      const bare = port.split(':')[1]!;
      const clash = [...seen.entries()].find(([other]) => other === port || other.endsWith(`:${bare}`) && (other.startsWith('0.0.0.0') || port.startsWith('0.0.0.0')));
      if (clash) problems.push(`host port ${port} of ${name} is already taken by ${clash[1]}`);
      seen.set(port, name);
    }
  }
  return problems;
}

export function checkDependencies(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const names = new Set(Object.keys(compose.services));
  const edges = new Map<string, string[]>();
  for (const [name, service] of Object.entries(compose.services)) {
    const deps = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
    edges.set(name, [...deps]);
    for (const dep of deps) if (!names.has(dep)) problems.push(`${name} depends on unknown service ${dep}`);
    if (!Array.isArray(service.depends_on)) {
      for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
        if (condition === 'service_healthy' && !(compose.services[dep] as { healthcheck?: unknown } | undefined)?.healthcheck) {
          problems.push(`${name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`);
        }
      }
    }
  }
  const visiting = new Set<string>();
  const done = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (done.has(name)) return;
    if (visiting.has(name)) {
      problems.push(`dependency cycle: ${[...path, name].join(' -> ')}`);
      return;
    }
    visiting.add(name);
    for (const dep of edges.get(name) ?? []) visit(dep, [...path, name]);
    visiting.delete(name);
    done.add(name);
  };
  for (const name of names) visit(name, []);
  return problems;
}

/** raft-node services keep RAFT_NODE_DATA_DIR in a named volume of their own. */
export function checkRaftVolumes(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const declared = new Set(Object.keys(compose.volumes ?? {}));
  const used = new Map<string, string>();
  for (const [name, service] of Object.entries(compose.services)) {
    if (appOf(service) !== 'raft-node') continue;
    const dataDir = service.environment?.RAFT_NODE_DATA_DIR;
    const mount = (service.volumes ?? []).map((spec) => spec.split(':')).find(([, target]) => target === dataDir);
    if (dataDir === undefined || mount === undefined) {
      problems.push(`${name}: RAFT_NODE_DATA_DIR (${dataDir}) is not a mounted volume`);
      continue;
    }
    const volume = mount[0]!;
    if (!declared.has(volume)) problems.push(`${name}: volume ${volume} is not declared under volumes:`);
    if (used.has(volume)) problems.push(`${name} shares volume ${volume} with ${used.get(volume)}`);
    used.set(volume, name);
  }
  return problems;
}

/** Member lists agree, listen ports match the member list, and the gateway lists every member's API. */
export function checkClusterWiring(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const nodes = Object.entries(compose.services).filter(([, service]) => appOf(service) === 'raft-node');
  const lists = new Set(nodes.map(([, service]) => service.environment?.RAFT_NODE_MEMBERS));
  if (lists.size !== 1) problems.push('raft-nodes disagree on RAFT_NODE_MEMBERS');
  const members = [...lists][0]?.split(',').map((item) => item.split('=')) ?? [];
  for (const [name, service] of nodes) {
    const env = service.environment ?? {};
    const member = members.find(([id]) => id === env.RAFT_NODE_MEMBER_ID);
    if (member === undefined) {
      problems.push(`${name}: member id ${env.RAFT_NODE_MEMBER_ID} is not in the member list`);
      continue;
    }
    const [, , peer, api] = member;
    if (!peer?.startsWith(`${name}:`) || !api?.startsWith(`${name}:`)) problems.push(`${name}: member entry ${member.join('=')} names another host`);
    if (env.RAFT_NODE_API_LISTEN_ADDRESS?.split(':')[1] !== api?.split(':')[1]) problems.push(`${name}: API listen port differs from ${api}`);
    if (env.RAFT_NODE_PEER_LISTEN_ADDRESS?.split(':')[1] !== peer?.split(':')[1]) problems.push(`${name}: peer listen port differs from ${peer}`);
  }
  const apis = members.map((member) => member[3]).sort();
  for (const [name, service] of Object.entries(compose.services)) {
    if (appOf(service) !== 'etcd-gateway') continue;
    const endpoints = (service.environment?.GATEWAY_NODE_ENDPOINTS ?? '').split(',').sort();
    if (JSON.stringify(endpoints) !== JSON.stringify(apis)) problems.push(`${name}: GATEWAY_NODE_ENDPOINTS ${endpoints.join(',')} differ from the members' APIs ${apis.join(',')}`);
  }
  return problems;
}

/** The password-verifier tier must scale with --scale: no fixed name, no host ports; keys shared with the gateway. */
export function checkVerifierScaling(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const gatewayKeys = Object.values(compose.services).find((s) => appOf(s) === 'etcd-gateway')?.environment?.GATEWAY_PASSWORD_PAYLOAD_KEYS_FROM_FILE;
  for (const [name, service] of Object.entries(compose.services)) {
    if (appOf(service) !== 'password-verifier') continue;
    if (service.container_name !== undefined) problems.push(`${name}: container_name prevents --scale`);
    if ((service.ports ?? []).some((spec) => hostPort(spec) !== undefined)) problems.push(`${name}: a host port binding prevents --scale`);
    if (service.environment?.VERIFIER_PAYLOAD_KEYS_FROM_FILE !== gatewayKeys) problems.push(`${name}: VERIFIER_PAYLOAD_KEYS_FROM_FILE differs from the gateway's GATEWAY_PASSWORD_PAYLOAD_KEYS_FROM_FILE`);
  }
  return problems;
}

/**
 * The token-service scales like the verifiers (no fixed name, no host ports), reads the same
 * members, shares the payload keys, and the gateway's token-service endpoints name it.
 */
export function checkTokenServiceWiring(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const gateway = Object.values(compose.services).find((s) => appOf(s) === 'etcd-gateway')?.environment ?? {};
  const services = Object.entries(compose.services).filter(([, service]) => appOf(service) === 'token-service');
  if (services.length === 0) problems.push('no token-service');
  const grpcAddresses = new Set<string>();
  for (const [name, service] of services) {
    const env = service.environment ?? {};
    if (service.container_name !== undefined) problems.push(`${name}: container_name prevents --scale`);
    if ((service.ports ?? []).some((spec) => hostPort(spec) !== undefined)) problems.push(`${name}: a host port binding prevents --scale`);
    if (env.TOKEN_SERVICE_NODE_ENDPOINTS !== gateway.GATEWAY_NODE_ENDPOINTS) problems.push(`${name}: TOKEN_SERVICE_NODE_ENDPOINTS differ from the gateway's GATEWAY_NODE_ENDPOINTS`);
    if (env.TOKEN_SERVICE_PASSWORD_PAYLOAD_KEYS_FROM_FILE !== gateway.GATEWAY_PASSWORD_PAYLOAD_KEYS_FROM_FILE) problems.push(`${name}: TOKEN_SERVICE_PASSWORD_PAYLOAD_KEYS_FROM_FILE differs from the gateway's`);
    grpcAddresses.add(`${name}:${env.TOKEN_SERVICE_GRPC_PORT}`);
  }
  for (const endpoint of (gateway.GATEWAY_TOKEN_SERVICE_ENDPOINTS ?? '').split(',').filter((item) => item !== '')) {
    if (!grpcAddresses.has(endpoint)) problems.push(`etcd-gateway: GATEWAY_TOKEN_SERVICE_ENDPOINTS names ${endpoint}, no token-service gRPC port`);
  }
  return problems;
}

/** Key material only through secret files: no option that carries it is set inline, every secret used is declared with a file. */
export function checkSecrets(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const declared = compose.secrets ?? {};
  for (const [name, service] of Object.entries(compose.services)) {
    for (const variable of Object.keys(service.environment ?? {})) {
      if (SECRET_OPTION.test(variable)) problems.push(`${name}: ${variable} is set inline; give it as ${variable}${FROM_FILE} with a compose secret`);
    }
    for (const secret of service.secrets ?? []) {
      if (declared[secret]?.file === undefined) problems.push(`${name}: secret ${secret} is not declared with a file under secrets:`);
    }
  }
  return problems;
}

/** Every service has a health check (compose waits on them; `docker ps` shows them). */
export function checkHealthchecks(compose: ComposeFile): string[] {
  return Object.entries(compose.services)
    .filter(([, service]) => (service.healthcheck?.test ?? []).length === 0)
    .map(([name]) => `${name} has no healthcheck`);
}

/** At least two gateways with the same settings apart from their advertised URL, each on its own host port. */
export function checkGateways(compose: ComposeFile): string[] {
  const problems: string[] = [];
  const gateways = Object.entries(compose.services).filter(([, service]) => appOf(service) === 'etcd-gateway');
  if (gateways.length < 2) problems.push(`${gateways.length} etcd-gateway service(s); clients need two endpoints`);
  const settings = (service: ComposeService): string => {
    const { GATEWAY_ADVERTISE_CLIENT_URL: _advertised, ...rest } = service.environment ?? {};
    return JSON.stringify(Object.entries(rest).sort());
  };
  for (const [name, service] of gateways.slice(1)) {
    if (settings(service) !== settings(gateways[0]![1])) problems.push(`${name}: settings differ from ${gateways[0]![0]}'s`);
  }
  for (const [name, service] of gateways) {
    const grpcPort = service.environment?.GATEWAY_GRPC_PORT;
    const published = (service.ports ?? []).find((spec) => spec.split('/')[0]!.endsWith(`:${grpcPort}`));
    const advertised = service.environment?.GATEWAY_ADVERTISE_CLIENT_URL ?? '';
    if (published === undefined) problems.push(`${name}: gRPC port ${grpcPort} is not published`);
    else if (!advertised.endsWith(`:${hostPort(published)?.split(':')[1]}`)) problems.push(`${name}: advertises ${advertised}, published as ${published}`);
  }
  return problems;
}

/** The Dockerfile is multi-stage, installs production dependencies only at runtime, and builds every app used. */
export function checkDockerfile(dockerfile: string, apps: readonly string[], workspaceRoot: string): string[] {
  const problems: string[] = [];
  if ((dockerfile.match(/^FROM /gm) ?? []).length < 2) problems.push('Dockerfile is not multi-stage');
  if (!/^RUN npm ci\b/m.test(dockerfile)) problems.push('Dockerfile does not npm ci');
  if (!/^RUN npm ci --omit=dev\b/m.test(dockerfile)) problems.push('Dockerfile runtime stage does not npm ci --omit=dev');
  if (!/^USER (?!root\b|0\b)\S+/m.test(dockerfile)) problems.push('Dockerfile does not run as a non-root user');
  const install = dockerfile.search(/^RUN npm ci\b/m);
  const sources = dockerfile.search(/^COPY \. /m);
  if (install === -1 || sources === -1 || install > sources) problems.push('Dockerfile copies the sources before npm ci (every change reinstalls the dependencies)');
  const build = /nx run-many -t build --projects=([a-z,-]+)/.exec(dockerfile);
  const built = new Set(build?.[1]?.split(',') ?? []);
  for (const app of apps) {
    if (!built.has(app)) problems.push(`Dockerfile does not build ${app}`);
    const project = JSON.parse(readFileSync(join(workspaceRoot, 'apps', app, 'project.json'), 'utf8')) as { targets?: Record<string, unknown> };
    if (project.targets?.build === undefined) problems.push(`apps/${app} has no build target`);
  }
  return problems;
}

/** `${VAR:?message}` / `${VAR:-default}` / `${VAR}` with values from `env` (compose's interpolation). */
export function interpolate(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_, name: string, kind: string | undefined, rest: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (kind === '-') return rest ?? '';
    if (kind === '?') throw new Error(`required variable ${name} is not set: ${rest}`);
    return '';
  });
}
