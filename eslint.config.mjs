// Lint configuration for the whole workspace.
//
// Two mechanisms guard the architecture (docs/architecture.md, "Import direction"):
// 1. @nx/enforce-module-boundaries: every project has a scope:* and a type:* tag; depConstraints say
//    which tags may import which, and bannedExternalImports keep infrastructure packages out of
//    domain and contract code.
// 2. For files of type:domain projects: no Node built-ins, no timers, no ambient clock or randomness
//    (they break replay determinism; inject a Clock and an Rng from @ward/shared/clock instead).
// Each rule is proven by tools/test/lint-rules.test.ts with a deliberate violation.
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';
import { listProjects } from './tools/eslint/projects.mjs';

const workspaceRoot = dirname(fileURLToPath(import.meta.url));
const projects = listProjects(workspaceRoot);
const rootsWithTag = (tag) => projects.filter((p) => p.tags.includes(tag)).map((p) => p.root);

const INFRASTRUCTURE_PACKAGES = [
  'bullmq',
  'ioredis',
  'jose',
  'bcrypt',
  'fastify',
  '@fastify/*',
  '@grpc/*',
  'pino',
  'prom-client',
  'etcd3',
];

const NODE_BUILTINS = [...new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))];
const NODE_BUILTIN_PATTERNS = ['node:*', ...NODE_BUILTINS.map((name) => `${name}/*`)];

const SOURCE_FILES = (roots) => roots.map((root) => `${root}/src/**/*.ts`);
const domainSourceFiles = SOURCE_FILES(rootsWithTag('type:domain'));
const TEST_FILES = ['**/*.test.ts', '**/test/**/*.ts', '**/*.bench.ts', '**/testing.ts'];


/**
 * Tag rules for @nx/enforce-module-boundaries. Tests may use any npm package (etcd3 as an
 * independent oracle, for instance), so banned external imports apply to source files only.
 */
function boundaryRule({ banExternals, allowTestingLibs }) {
  const bans = (list) => (banExternals ? { bannedExternalImports: list } : {});
  // Test files of any project may use the test-only harnesses in libs/testing.
  const withTesting = (constraint) =>
    allowTestingLibs && !constraint.onlyDependOnLibsWithTags.includes('*')
      ? {
          ...constraint,
          onlyDependOnLibsWithTags: [
            ...constraint.onlyDependOnLibsWithTags,
            constraint.sourceTag.startsWith('type:') ? 'type:testing' : 'scope:testing',
          ],
        }
      : constraint;
  return [
    'error',
    {
      enforceBuildableLibDependency: false,
      allowCircularSelfDependency: false,
      banTransitiveDependencies: false,
      depConstraints: [
        // Import direction by type: apps -> adapters/platform -> domain -> contracts.
        { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:adapter', 'type:platform', 'type:domain', 'type:contract'] },
        { sourceTag: 'type:adapter', onlyDependOnLibsWithTags: ['type:domain', 'type:contract', 'type:platform'] },
        { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:platform', 'type:contract'] },
        { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:contract'], ...bans(INFRASTRUCTURE_PACKAGES) },
        {
          sourceTag: 'type:contract',
          onlyDependOnLibsWithTags: ['type:contract'],
          // Generated etcd/proto code needs @grpc/grpc-js and protobuf loaders; nothing else.
          ...bans(INFRASTRUCTURE_PACKAGES.filter((p) => p !== '@grpc/*')),
        },
        { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:testing', 'type:adapter', 'type:platform', 'type:domain', 'type:contract'] },
        { sourceTag: 'type:tooling', onlyDependOnLibsWithTags: ['*'] },
        // Scopes: raft, auth and mesh know only themselves and shared; etcd composes raft and auth.
        { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
        { sourceTag: 'scope:platform', onlyDependOnLibsWithTags: ['scope:platform', 'scope:shared'] },
        { sourceTag: 'scope:raft', onlyDependOnLibsWithTags: ['scope:raft', 'scope:shared', 'scope:platform'] },
        { sourceTag: 'scope:auth', onlyDependOnLibsWithTags: ['scope:auth', 'scope:shared', 'scope:platform'] },
        { sourceTag: 'scope:mesh', onlyDependOnLibsWithTags: ['scope:mesh', 'scope:shared', 'scope:platform'] },
        { sourceTag: 'scope:etcd', onlyDependOnLibsWithTags: ['scope:etcd', 'scope:raft', 'scope:auth', 'scope:shared', 'scope:platform'] },
        { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['*'] },
        { sourceTag: 'scope:tooling', onlyDependOnLibsWithTags: ['*'] },
      ].map(withTesting),
    },
  ];
}

/**
 * Each infrastructure package has exactly one owning project (docs/architecture.md): only that
 * project's source may import it, so replacing or upgrading it touches one place. Test files are
 * exempt (tests may use any package as an independent oracle). A separate rule id
 * (@typescript-eslint/no-restricted-imports) keeps these bans from overriding the
 * no-restricted-imports blocks below.
 */
const EXCLUSIVE_PACKAGES = [
  { name: 'jose', owner: 'libs/auth/tokens' },
  { name: 'bcrypt', owner: 'libs/auth/password-hashing' },
  { name: 'bullmq', owner: 'libs/platform/redis-queue' },
  { name: 'ioredis', owner: 'libs/platform/redis-queue' },
];

function exclusivePackageBlocks() {
  const rule = '@typescript-eslint/no-restricted-imports';
  const bansFor = (project) => ({
    paths: EXCLUSIVE_PACKAGES.filter(({ owner }) => owner !== project).map(({ name, owner }) => ({
      name,
      message: `Only ${owner} imports ${name}; use its API.`,
    })),
  });
  const owners = [...new Set(EXCLUSIVE_PACKAGES.map(({ owner }) => owner))];
  // Later blocks override earlier ones for the files they match: owners get a narrower ban.
  return [
    { files: ['apps/**/*.ts', 'libs/**/*.ts'], ignores: TEST_FILES, rules: { [rule]: ['error', bansFor(undefined)] } },
    ...owners.map((owner) => ({ files: [`${owner}/**/*.ts`], ignores: TEST_FILES, rules: { [rule]: ['error', bansFor(owner)] } })),
  ];
}

export default [
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/tmp/**',
      '**/generated/**',
      '**/*.d.ts',
      'tools/eslint/fixtures/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "ExportAllDeclaration[exportKind='value']",
          message: 'Name each export: wildcard re-exports hide the public surface and invite cycles.',
        },
      ],
    },
  },
  {
    files: ['**/*.ts', '**/*.mts'],
    ignores: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': boundaryRule({ banExternals: true, allowTestingLibs: false }) },
  },
  {
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': boundaryRule({ banExternals: false, allowTestingLibs: true }) },
  },
  {
    // Test-only helpers never reach production code (the testing libs themselves may share them).
    files: ['apps/**/src/**/*.ts', 'libs/**/src/**/*.ts'],
    ignores: [...TEST_FILES, 'libs/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@ward/testing/*'], message: 'libs/testing/* is for tests only.' }] },
      ],
    },
  },
  {
    // Domain code is deterministic: no I/O, no timers, no wall clock, no ambient randomness.
    // (A never-matching glob keeps the block valid while no domain project exists.)
    files: domainSourceFiles.length > 0 ? domainSourceFiles : ['__no_domain_projects__/**'],
    ignores: TEST_FILES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: NODE_BUILTINS.map((name) => ({ name, message: 'Domain code does no I/O: no Node built-ins.' })),
          patterns: [
            { group: NODE_BUILTIN_PATTERNS, message: 'Domain code does no I/O: no Node built-ins.' },
            { group: ['@ward/testing/*'], message: 'libs/testing/* is for tests only.' },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask'].map(
          (name) => ({ name, message: 'Domain code has no timers: count ticks or take a Clock.' }),
        ),
        ...['process', 'Buffer', 'require', 'fetch', 'performance', 'crypto'].map((name) => ({
          name,
          message: 'Domain code does no I/O and reads no ambient state.',
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Inject an Rng from @ward/shared/clock.' },
        { object: 'Date', property: 'now', message: 'Inject a Clock from @ward/shared/clock.' },
        { object: 'performance', property: 'now', message: 'Inject a Clock from @ward/shared/clock.' },
        { object: 'globalThis', property: 'setTimeout', message: 'Domain code has no timers.' },
        { object: 'globalThis', property: 'setInterval', message: 'Domain code has no timers.' },
        { object: 'globalThis', property: 'process', message: 'Domain code reads no ambient state.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "ExportAllDeclaration[exportKind='value']",
          message: 'Name each export: wildcard re-exports hide the public surface and invite cycles.',
        },
        { selector: "NewExpression[callee.name='Date']", message: 'Inject a Clock from @ward/shared/clock.' },
      ],
    },
  },
  ...exclusivePackageBlocks(),
];
