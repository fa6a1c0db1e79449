// Proves every architectural lint rule with a deliberate violation: each case lints a small source
// text as if it lived in a project with the given tags, through the workspace's real ESLint
// config, and asserts the rule that must fire. A clean domain file must pass.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { listProjects } from '../eslint/projects.mjs';

const workspaceRoot = resolve(import.meta.dirname, '../..');
const projects = listProjects(workspaceRoot);
let eslint: ESLint;

beforeAll(() => {
  // The Nx rule reads the cached project graph; refresh it so new projects are known.
  const refreshed = spawnSync('npx', ['nx', 'show', 'projects'], { cwd: workspaceRoot, env: { ...process.env, NX_DAEMON: 'false' } });
  if (refreshed.status !== 0) throw new Error(`nx show projects failed: ${refreshed.stderr}`);
  eslint = new ESLint({ cwd: workspaceRoot });
});

function projectWith(...tags: string[]): { root: string; name: string } {
  const project = projects.find((p) => tags.every((tag) => p.tags.includes(tag)));
  if (!project) throw new Error(`no project tagged ${tags.join(' + ')}`);
  return project;
}

async function ruleIds(code: string, project: { root: string }, file = 'lint-fixture.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(workspaceRoot, project.root, 'src', file) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

describe('domain code stays free of infrastructure (bannedExternalImports)', () => {
  const banned = ['bullmq', 'jose', 'bcrypt', 'fastify', '@grpc/grpc-js', 'ioredis', 'pino', 'prom-client'];
  it.each(banned)('a domain lib importing %s fails lint', async (pkg) => {
    const ids = await ruleIds(`import * as banned from '${pkg}';\nexport const used = banned;\n`, projectWith('type:domain'));
    expect(ids).toContain('@nx/enforce-module-boundaries');
  });

  it('a contract lib importing jose fails lint', async () => {
    const ids = await ruleIds(`import * as jose from 'jose';\nexport const used = jose;\n`, projectWith('type:contract'));
    expect(ids).toContain('@nx/enforce-module-boundaries');
  });
});

describe('domain code does no I/O and reads no ambient clock or randomness', () => {
  const cases: [string, string, string][] = [
    ['node:fs import', `import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n`, 'no-restricted-imports'],
    ['bare fs import', `import { readFileSync } from 'fs';\nexport const f = readFileSync;\n`, 'no-restricted-imports'],
    ['node:net import', `import * as net from 'node:net';\nexport const n = net;\n`, 'no-restricted-imports'],
    ['setTimeout', `export function later(): void {\n  setTimeout(() => undefined, 10);\n}\n`, 'no-restricted-globals'],
    ['setInterval', `export const id = setInterval(() => undefined, 10);\n`, 'no-restricted-globals'],
    ['Math.random', `export const roll = (): number => Math.random();\n`, 'no-restricted-properties'],
    ['Date.now', `export const now = (): number => Date.now();\n`, 'no-restricted-properties'],
    ['new Date', `export const now = (): Date => new Date();\n`, 'no-restricted-syntax'],
    ['process', `export const home = (): unknown => process.env;\n`, 'no-restricted-globals'],
    ['Buffer', `export const bytes = (): unknown => Buffer.from('x');\n`, 'no-restricted-globals'],
  ];
  it.each(cases)('%s in a domain lib fails lint', async (_name, code, rule) => {
    expect(await ruleIds(code, projectWith('type:domain'))).toContain(rule);
  });

  it('the same code is allowed in a platform lib (the rules are scoped to domain code)', async () => {
    expect(await ruleIds(`export const now = (): number => Date.now();\n`, projectWith('type:platform'))).toEqual([]);
  });

  it('domain tests may read fixtures from disk', async () => {
    const code = `import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n`;
    expect(await ruleIds(code, projectWith('type:domain'), 'fixture.test.ts')).toEqual([]);
  });

  it('a clean domain file passes', async () => {
    const code = `import { assert } from '@ward/shared/errors';\nexport function half(n: number): number {\n  assert(n % 2 === 0, 'even');\n  return n / 2;\n}\n`;
    expect(await ruleIds(code, projectWith('type:domain'))).toEqual([]);
  });
});

describe('import direction between projects (depConstraints)', () => {
  it('a contract may not import a platform lib (type rule)', async () => {
    const code = `import { createLogger } from '@ward/platform/logging';\nexport const l = createLogger;\n`;
    expect(await ruleIds(code, projectWith('scope:shared', 'type:contract'))).toContain('@nx/enforce-module-boundaries');
  });

  it('a platform lib may not import the etcd scope (scope rule)', async () => {
    const code = `import { wireError } from '@ward/etcd/wire-errors';\nexport const w = wireError;\n`;
    expect(await ruleIds(code, projectWith('scope:platform'))).toContain('@nx/enforce-module-boundaries');
  });

  it('the shared scope may not import another scope', async () => {
    const code = `import { wireError } from '@ward/etcd/wire-errors';\nexport const w = wireError;\n`;
    expect(await ruleIds(code, projectWith('scope:shared'))).toContain('@nx/enforce-module-boundaries');
  });

  it('a domain lib may not import a platform lib', async () => {
    const code = `import { createLogger } from '@ward/platform/logging';\nexport const l = createLogger;\n`;
    expect(await ruleIds(code, projectWith('type:domain'))).toContain('@nx/enforce-module-boundaries');
  });

  it('production code may not import test helpers', async () => {
    const code = `import { something } from '@ward/testing/anything';\nexport const s = something;\n`;
    expect(await ruleIds(code, projectWith('type:platform'))).toContain('no-restricted-imports');
  });

  it('relative imports across projects are rejected', async () => {
    const code = `import { assert } from '../../../shared/errors/src/assert';\nexport const a = assert;\n`;
    expect(await ruleIds(code, projectWith('scope:platform'))).toContain('@nx/enforce-module-boundaries');
  });

  it('an allowed direction passes (etcd contract -> shared contract)', async () => {
    const code = `import { CodedError } from '@ward/shared/errors';\nexport const c = CodedError;\n`;
    expect(await ruleIds(code, projectWith('scope:etcd', 'type:contract'))).toEqual([]);
  });
});

describe('no wildcard value re-exports', () => {
  it('export * from a sibling fails lint', async () => {
    expect(await ruleIds(`export * from './other';\n`, projectWith('type:platform'))).toContain('no-restricted-syntax');
  });
});

describe('test harnesses are for tests', () => {
  it('a test file of an adapter lib may import a testing lib', async () => {
    const code = `import { something } from '@ward/testing/net-proxy';\nexport const s = something;\n`;
    expect(await ruleIds(code, projectWith('type:adapter'), 'uses-harness.test.ts')).toEqual([]);
  });

  it('a testing lib may import another testing lib', async () => {
    const code = `import { something } from '@ward/testing/cluster';\nexport const s = something;\n`;
    const harness = projects.find((p) => p.name === 'testing-etcd-harness')!;
    expect(await ruleIds(code, harness)).toEqual([]);
  });

  it('the same import in the adapter lib source fails lint', async () => {
    const code = `import { something } from '@ward/testing/net-proxy';\nexport const s = something;\n`;
    const ids = await ruleIds(code, projectWith('type:adapter'));
    expect(ids).toContain('@nx/enforce-module-boundaries');
    expect(ids).toContain('no-restricted-imports');
  });
});

describe('each infrastructure package has one owning project', () => {
  const cases: [string, string, string][] = [
    ['jose', 'libs/auth/tokens', `import { SignJWT } from 'jose';\nexport const s = SignJWT;\n`],
    ['bcrypt', 'libs/auth/password-hashing', `import bcrypt from 'bcrypt';\nexport const b = bcrypt;\n`],
    ['bullmq', 'libs/platform/redis-queue', `import { Queue } from 'bullmq';\nexport const q = Queue;\n`],
    ['ioredis', 'libs/platform/redis-queue', `import { Redis } from 'ioredis';\nexport const r = Redis;\n`],
  ];
  const projectAt = (root: string): { root: string } => {
    const project = projects.find((p) => p.root === root);
    if (!project) throw new Error(`no project at ${root}`);
    return project;
  };

  it.each(cases)('%s: another adapter importing it fails lint; its owner passes', async (_name, owner, code) => {
    const other = projectAt(owner === 'libs/auth/tokens' ? 'libs/auth/password-hashing' : 'libs/auth/tokens');
    expect(await ruleIds(code, other)).toContain('@typescript-eslint/no-restricted-imports');
    expect(await ruleIds(code, projectAt(owner))).not.toContain('@typescript-eslint/no-restricted-imports');
  });

  it('an app importing jose fails lint; its tests may', async () => {
    const code = `import { SignJWT } from 'jose';\nexport const s = SignJWT;\n`;
    expect(await ruleIds(code, projectAt('apps/password-verifier'))).toContain('@typescript-eslint/no-restricted-imports');
    expect(await ruleIds(code, projectAt('apps/password-verifier'), 'oracle.test.ts')).toEqual([]);
  });
});
