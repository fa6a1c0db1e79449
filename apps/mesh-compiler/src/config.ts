/**
 * Configuration of the mesh-compiler HTTP function (`ward-mesh serve`), read once from
 * `MESH_COMPILER_*` environment variables. The CLI itself takes flags only.
 */
import { bool, defineConfig, int, oneOf, string } from '@ward/platform/config';
import type { ConfigValues } from '@ward/platform/config';

export const MESH_COMPILER_CONFIG = defineConfig({
  prefix: 'MESH_COMPILER',
  options: {
    httpHost: string({ default: '127.0.0.1', why: 'Interface the HTTP function listens on; loopback unless deployed behind a proxy.', maxLengthChars: 255 }),
    httpPort: int({ default: 8088, min: 0, max: 65_535, why: 'TCP port of the HTTP function (0 picks a free port).' }),
    bodyLimitBytes: int({
      default: 5 * 1024 * 1024,
      min: 1024,
      max: 64 * 1024 * 1024,
      why: 'Largest request body; the YAML inside is further limited to 4 MiB per input by the loader.',
    }),
    requestTimeoutMs: int({ default: 30_000, min: 100, max: 600_000, why: 'Whole-request timeout, so a slow client cannot hold a connection.' }),
    keepAliveTimeoutMs: int({ default: 5_000, min: 100, max: 600_000, why: 'Idle keep-alive connections are closed after this.' }),
    maxInputsCount: int({ default: 100, min: 1, max: 10_000, why: 'Documents sources (files) accepted in one request.' }),
    logLevel: oneOf({ default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, why: 'pino log level.' }),
    processMetrics: bool({ default: true, why: 'Export process metrics (CPU, memory, event loop) on /metrics.' }),
  },
});

export type MeshCompilerConfig = ConfigValues<(typeof MESH_COMPILER_CONFIG)['options']>;
