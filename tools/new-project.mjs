#!/usr/bin/env node
// Creates a library or an app with the workspace's conventions:
//   node tools/new-project.mjs lib <scope>/<name> --type <domain|contract|adapter|platform|testing>
//   node tools/new-project.mjs app <name> --scope <scope>
// It writes project.json (name from the path, scope and type tags), tsconfig.lib/app.json,
// tsconfig.spec.json and src/index.ts, and registers the `@ward/<scope>/<name>` alias.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TYPES = ['domain', 'contract', 'adapter', 'platform', 'testing'];
const SCOPES = ['shared', 'etcd', 'raft', 'auth', 'mesh', 'platform', 'testing'];
// Domain and contract code compiles without Node's types (no process, Buffer or timers).
const PURE_TYPES = new Set(['domain', 'contract']);

function fail(message) {
  console.error(`new-project: ${message}`);
  process.exit(2);
}

function option(name) {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

const [kind, path] = process.argv.slice(2);
if (kind !== 'lib' && kind !== 'app') fail('first argument must be "lib" or "app"');
if (!path || !/^[a-z][a-z0-9-]*(\/[a-z][a-z0-9-]*)?$/.test(path)) fail('give a kebab-case path');

const isLib = kind === 'lib';
const [scope, name] = isLib ? path.split('/') : [option('scope'), path];
const type = isLib ? option('type') : 'app';
if (!SCOPES.includes(scope)) fail(`scope must be one of ${SCOPES.join(', ')}`);
if (isLib && !TYPES.includes(type)) fail(`--type must be one of ${TYPES.join(', ')}`);
if (!name) fail('lib paths are <scope>/<name>');

const root = isLib ? join('libs', scope, name) : join('apps', name);
if (existsSync(root)) fail(`${root} already exists`);
const up = isLib ? '../../..' : '../..';
mkdirSync(join(root, 'src'), { recursive: true });

const targets = { lint: {}, typecheck: {}, test: {} };
if (!isLib) targets.build = {};
writeJson(join(root, 'project.json'), {
  name: isLib ? `${scope}-${name}` : name,
  $schema: `${up}/node_modules/nx/schemas/project-schema.json`,
  sourceRoot: `${root}/src`,
  projectType: isLib ? 'library' : 'application',
  tags: [`scope:${scope}`, `type:${type}`],
  targets,
});
writeJson(join(root, isLib ? 'tsconfig.lib.json' : 'tsconfig.app.json'), {
  extends: `${up}/tsconfig.base.json`,
  compilerOptions: { types: PURE_TYPES.has(type) ? [] : ['node'] },
  include: ['src/**/*.ts'],
  exclude: ['src/**/*.test.ts', 'src/**/*.bench.ts'],
});
writeJson(join(root, 'tsconfig.spec.json'), {
  extends: `${up}/tsconfig.base.json`,
  compilerOptions: { types: ['node'] },
  include: ['src/**/*.ts', 'test/**/*.ts'],
});
writeFileSync(join(root, 'src', isLib ? 'index.ts' : 'main.ts'), '');

if (isLib) {
  const tsconfigPath = 'tsconfig.base.json';
  const tsconfig = JSON.parse(readFileSync(tsconfigPath, 'utf8'));
  tsconfig.compilerOptions.paths[`@ward/${scope}/${name}`] = [`${root}/src/index.ts`];
  const sorted = Object.fromEntries(Object.entries(tsconfig.compilerOptions.paths).sort(([a], [b]) => a.localeCompare(b)));
  tsconfig.compilerOptions.paths = sorted;
  writeJson(tsconfigPath, tsconfig);
}
console.log(`created ${root} (${isLib ? `@ward/${scope}/${name}, ` : ''}tags scope:${scope}, type:${type})`);
