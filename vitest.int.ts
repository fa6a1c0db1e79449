// Integration tests: real sockets, real processes, real Redis. One file at a time so that
// clusters and ports never compete (bullmq's vitest.config.ts does the same for Redis).
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.base';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ['**/*.int.test.ts'],
      exclude: ['**/node_modules/**', '**/dist/**'],
      fileParallelism: false,
      sequence: { concurrent: false },
      testTimeout: 180_000,
      hookTimeout: 180_000,
    },
  }),
);
