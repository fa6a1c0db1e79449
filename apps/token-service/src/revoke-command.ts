// `token-service revoke-key <kid>`: the operator's revocation, through a running token-service's
// gRPC Revoke. The admin password is read from standard input (first line), never from the
// command line, where other users of the machine could see it.
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { wardTokenGrpc } from '@ward/etcd/proto';

/** How long the revocation may take. */
const REVOKE_DEADLINE_MS = 20_000;
/** The password line read from stdin at most. */
const MAX_PASSWORD_BYTES = 1024;

function option(argv: readonly string[], name: string, fallback: string): string {
  const index = argv.indexOf(`--${name}`);
  return index === -1 ? fallback : (argv[index + 1] ?? fallback);
}

async function firstLine(input: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of input) {
    const bytes = Buffer.from(chunk as Buffer);
    chunks.push(bytes);
    total += bytes.length;
    if (bytes.includes(0x0a) || total > MAX_PASSWORD_BYTES) break;
  }
  const all = Buffer.concat(chunks);
  const end = all.indexOf(0x0a);
  return end === -1 ? all.subarray(0, MAX_PASSWORD_BYTES) : all.subarray(0, end > 0 && all[end - 1] === 0x0d ? end - 1 : end);
}

/** Runs the command; resolves to the exit code. */
export async function revokeKeyCommand(argv: readonly string[], io: { stdin: NodeJS.ReadableStream; out: (line: string) => void }): Promise<number> {
  const keyId = argv[0];
  if (keyId === undefined || keyId.startsWith('--')) {
    io.out('usage: token-service revoke-key <kid> [--endpoint host:port] [--user name]   (password on stdin)');
    return 2;
  }
  const endpoint = option(argv, 'endpoint', '127.0.0.1:2383');
  const user = option(argv, 'user', 'root');
  const password = await firstLine(io.stdin);
  const client = new (wardTokenGrpc().Token)(endpoint, credentials.createInsecure());
  try {
    const error = await new Promise<ServiceError | null>((resolve) =>
      client.Revoke({ name: Buffer.from(user), password, key_id: keyId }, { deadline: Date.now() + REVOKE_DEADLINE_MS }, (failure: ServiceError | null) => resolve(failure)),
    );
    if (error !== null) {
      io.out(`revoke-key: ${error.details}`);
      return 1;
    }
    io.out(`revoked ${keyId}`);
    return 0;
  } finally {
    password.fill(0);
    client.close();
  }
}
