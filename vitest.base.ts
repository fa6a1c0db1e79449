// Shared vitest configuration for every project's `test` target. Nx runs
// `vitest run --config vitest.base.ts --dir <projectRoot>`, so one file serves all projects.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

const workspaceRoot = dirname(fileURLToPath(import.meta.url));

/** Turns tsconfig.base.json `paths` into vite aliases, so `@ward/x/y` resolves to its index.ts. */
export function workspaceAliases(): Record<string, string> {
  const tsconfig = JSON.parse(readFileSync(resolve(workspaceRoot, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const aliases: Record<string, string> = {};
  for (const [alias, targets] of Object.entries(tsconfig.compilerOptions.paths)) {
    const target = targets[0];
    if (target !== undefined) aliases[alias] = resolve(workspaceRoot, target);
  }
  return aliases;
}

export default defineConfig({
  root: workspaceRoot,
  resolve: { alias: workspaceAliases() },
  test: {
    globals: false,
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', '**/*.int.test.ts', '**/*.bench.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
