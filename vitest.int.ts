// Integration tests: real sockets, real processes, real Redis. One file at a time so that
// clusters and ports never compete (bullmq's vitest.config.ts does the same for Redis).
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.base';

const merged = mergeConfig(
  base,
  defineConfig({
    test: {
      fileParallelism: false,
      sequence: { concurrent: false },
      testTimeout: 180_000,
      hookTimeout: 180_000,
    },
  }),
);

// mergeConfig concatenates arrays, which would keep the unit-test include and its exclusion of
// `*.int.test.ts`; set both outright so this config runs the integration tests and only them.
merged.test = { ...merged.test, include: ['**/*.int.test.ts'], exclude: ['**/node_modules/**', '**/dist/**'] };

export default merged;
