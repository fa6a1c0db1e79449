/** `ward-mesh serve`: reads MESH_COMPILER_* configuration, starts the HTTP function, stops on a signal. */
import { readFileSync, statSync } from 'node:fs';
import { ConfigError, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { EXIT } from '../commands/command-result';
import { MESH_COMPILER_CONFIG } from '../config';
import { createMeshCompilerHttp } from './http-app';
import { registerXdsRoutes, startControlPlane, type ControlPlane } from '../xds/control-plane';
import type { AdsTlsMaterial } from '../xds/ads-server';

interface ServeArgs {
  readonly xds?: string;
  readonly policies?: string;
  /** `--xds-tls-cert/--xds-tls-key/--xds-tls-ca`: file paths, all three or none. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly ca: string };
}

const TLS_FLAGS = { '--xds-tls-cert': 'cert', '--xds-tls-key': 'key', '--xds-tls-ca': 'ca' } as const;
const FLAGS = new Set(['--xds', '--policies', ...Object.keys(TLS_FLAGS)]);
const MAX_PEM_BYTES = 1024 * 1024;

/** `--xds <host:port>`, and with it `--policies <dir>` and the ADS mTLS files. */
export function parseServeArgs(argv: readonly string[]): ServeArgs | string {
  const out: { xds?: string; policies?: string } = {};
  const tls: { cert?: string; key?: string; ca?: string } = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (!FLAGS.has(flag ?? '')) return `serve: unknown argument ${JSON.stringify(arg)}; configure the HTTP function with MESH_COMPILER_* variables`;
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') return `serve: ${flag} needs a value`;
    if (flag === '--xds') {
      if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/u.test(value) || Number(value.slice(value.lastIndexOf(':') + 1)) > 65535) return `serve: --xds takes host:port, got ${JSON.stringify(value)}`;
      out.xds = value;
    } else if (flag === '--policies') {
      out.policies = value;
    } else {
      tls[TLS_FLAGS[flag as keyof typeof TLS_FLAGS]] = value;
    }
  }
  if (out.policies !== undefined && out.xds === undefined) return 'serve: --policies needs --xds';
  const given = Object.keys(tls).length;
  if (given > 0 && out.xds === undefined) return 'serve: --xds-tls-cert, --xds-tls-key and --xds-tls-ca need --xds';
  if (given > 0 && given < 3) return 'serve: mTLS for ADS needs all of --xds-tls-cert, --xds-tls-key and --xds-tls-ca';
  if (tls.cert !== undefined && tls.key !== undefined && tls.ca !== undefined) return { ...out, tls: { cert: tls.cert, key: tls.key, ca: tls.ca } };
  return out;
}

/** Reads the PEM files; a problem names the flag and the file, never the content. */
export function readTlsMaterial(paths: { readonly cert: string; readonly key: string; readonly ca: string }): AdsTlsMaterial | string {
  const read = (flag: string, path: string, marker: RegExp): Buffer | string => {
    try {
      const stat = statSync(path);
      if (!stat.isFile()) return `${flag} ${JSON.stringify(path)} is not a regular file`;
      if (stat.size > MAX_PEM_BYTES) return `${flag} ${JSON.stringify(path)} is larger than ${MAX_PEM_BYTES} bytes`;
      const bytes = readFileSync(path);
      if (!marker.test(bytes.toString('latin1'))) return `${flag} ${JSON.stringify(path)} holds no PEM ${flag === '--xds-tls-key' ? 'private key' : 'certificate'}`;
      return bytes;
    } catch (error) {
      return `${flag} ${JSON.stringify(path)} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  };
  const cert = read('--xds-tls-cert', paths.cert, /-----BEGIN CERTIFICATE-----/);
  if (typeof cert === 'string') return cert;
  const key = read('--xds-tls-key', paths.key, /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  if (typeof key === 'string') return key;
  const ca = read('--xds-tls-ca', paths.ca, /-----BEGIN CERTIFICATE-----/);
  if (typeof ca === 'string') return ca;
  return { cert, key, ca };
}

/** Starts the server and resolves with the exit code once it has stopped. */
export async function serveFromEnvironment(env: Readonly<Record<string, string | undefined>>, argv: readonly string[]): Promise<number> {
  const args = parseServeArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`ward-mesh: ${args}\n`);
    return EXIT.usage;
  }
  let config;
  try {
    config = loadConfig(MESH_COMPILER_CONFIG, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ward-mesh: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  const logger = createLogger({ name: 'mesh-compiler', level: config.logLevel });
  const metrics = createMetrics({ prefix: 'ward_mesh_compiler_', collectProcessMetrics: config.processMetrics });
  const app = createMeshCompilerHttp({ config, logger, metrics });
  let plane: ControlPlane | undefined;
  if (args.xds !== undefined) {
    let tls: AdsTlsMaterial | undefined;
    if (args.tls !== undefined) {
      const material = readTlsMaterial(args.tls);
      if (typeof material === 'string') {
        process.stderr.write(`ward-mesh: serve: ${material}\n`);
        return EXIT.usage;
      }
      tls = material;
    }
    try {
      plane = await startControlPlane({ address: args.xds, logger, ...(args.policies !== undefined ? { directory: args.policies } : {}), ...(tls !== undefined ? { tls } : {}) });
    } catch (error) {
      // A key that does not match its certificate, or an address that cannot be bound.
      process.stderr.write(`ward-mesh: serve: the xDS server could not start: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT.usage;
    }
    registerXdsRoutes(app, plane);
    logger.info({ xdsPort: plane.port, xdsTransport: tls === undefined ? 'plaintext' : 'mtls', policies: args.policies ?? null, version: plane.store.snapshot.version }, 'xds control plane listening');
  }
  try {
    await app.listen({ host: config.httpHost, port: config.httpPort });
  } catch (error) {
    // The xDS server, when started, must not keep the process alive without its HTTP side.
    await plane?.close();
    await app.close();
    process.stderr.write(`ward-mesh: serve: the HTTP server could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.usage;
  }
  logger.info({ address: app.server.address() }, 'mesh compiler listening');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await app.close();
  await plane?.close();
  logger.info('mesh compiler stopped');
  return EXIT.ok;
}
