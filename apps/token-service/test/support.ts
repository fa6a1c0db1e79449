// Shared by the token-service integration tests: a gRPC client of wardtoken.Token, a log sink,
// and JWT inspection helpers.
import { freePorts } from '@ward/testing/cluster';
import { Writable } from 'node:stream';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { wardTokenGrpc, type IssueResponse__Output, type KeysResponse__Output, type TokenClient } from '@ward/etcd/proto';
import { createLogger, type Logger } from '@ward/platform/logging';
import { EtcdGrpcClient, ManagedProcess, buildWardBundles, waitUntil } from '@ward/testing/etcd-harness';

export type Outcome<T> = { ok: true; response: T } | { ok: false; code: number; details: string };

export class TokenTestClient {
  private readonly client: TokenClient;

  constructor(address: string) {
    this.client = new (wardTokenGrpc().Token)(address, credentials.createInsecure());
  }

  issue(name: string | Buffer, password: string | Buffer): Promise<Outcome<IssueResponse__Output>> {
    return new Promise((resolve) => {
      this.client.Issue({ name: Buffer.from(name), password: Buffer.from(password) }, { deadline: Date.now() + 20_000 }, (error: ServiceError | null, response?: IssueResponse__Output) =>
        resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, response: response! }),
      );
    });
  }

  async token(name: string, password: string): Promise<string> {
    const outcome = await this.issue(name, password);
    if (!outcome.ok) throw new Error(`Issue ${name} failed: ${outcome.code} ${outcome.details}`);
    return outcome.response.token;
  }

  keys(): Promise<Outcome<KeysResponse__Output>> {
    return new Promise((resolve) => {
      this.client.Keys({}, { deadline: Date.now() + 5000 }, (error: ServiceError | null, response?: KeysResponse__Output) =>
        resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, response: response! }),
      );
    });
  }

  revoke(name: string, password: string, keyId: string): Promise<Outcome<Record<string, never>>> {
    return new Promise((resolve) => {
      this.client.Revoke({ name: Buffer.from(name), password: Buffer.from(password), key_id: keyId }, { deadline: Date.now() + 20_000 }, (error: ServiceError | null) =>
        resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, response: {} }),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

/** A debug-level logger whose lines are kept in `lines`. */
export function capturingLogger(name: string): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  return { logger: createLogger({ name, level: 'debug', destination }), lines };
}

export function jwtPart(token: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A second etcd-gateway process in front of the same raft-nodes (the harness starts one). */
export async function startGatewayProcess(env: Record<string, string>): Promise<{ process: ManagedProcess; grpcEndpoint: string; httpUrl: string }> {
  const { gateway } = buildWardBundles();
  const [grpcPort, httpPort] = (await freePorts(2)) as [number, number];
  const child = new ManagedProcess({
    name: 'etcd-gateway-2',
    command: process.execPath,
    args: [gateway],
    env: { PATH: process.env['PATH'] ?? '', GATEWAY_GRPC_PORT: String(grpcPort), GATEWAY_HTTP_PORT: String(httpPort), GATEWAY_LOG_LEVEL: 'warn', ...env },
  });
  const grpcEndpoint = `127.0.0.1:${grpcPort}`;
  const client = new EtcdGrpcClient(grpcEndpoint);
  try {
    await waitUntil(
      'second gateway answers',
      async () => {
        if (!child.alive) throw new Error(`gateway exited: ${child.output()}`);
        const outcome = await client.call('Auth', 'AuthStatus', {}, { deadlineMs: 1000 });
        return outcome.ok || outcome.code !== 14;
      },
      30_000,
      100,
    );
  } finally {
    client.close();
  }
  return { process: child, grpcEndpoint, httpUrl: `http://127.0.0.1:${httpPort}` };
}
