// Integration tests: real sockets, real processes, real Redis. One file at a time so that
// clusters and ports never compete (bullmq's vitest.config.ts does the same for Redis).
// The test options are spread rather than merged: mergeConfig concatenates arrays, which would
// keep the base config's exclusion of `*.int.test.ts`.
import { defineConfig } from 'vitest/config';
import base from './vitest.base';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['**/*.int.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
