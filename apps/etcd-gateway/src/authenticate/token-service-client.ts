// Authenticate on a gateway configured with token-service endpoints: the token-service applies
// etcd's rule (AuthCheck, password, re-read) and mints the JWT; the gateway only relays. Its
// answers are etcd's Authenticate errors (code and text), passed on unchanged. Endpoints are
// tried in turn: one that is down (UNAVAILABLE before any answer) hands the call to the next.
import { credentials, status as Status, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import type { AuthenticateOutcome } from '@ward/etcd/authenticate';
import { wardTokenGrpc, type IssueResponse__Output, type TokenClient } from '@ward/etcd/proto';
import { isGrpcStatusCode, wireError, wireErrorNameByMessage } from '@ward/etcd/wire-errors';
import { GrpcStatusError, type Cancellation } from '@ward/platform/grpc-server';

export interface TokenServiceClientOptions {
  readonly endpoints: readonly string[];
  readonly requestTimeoutMs: number;
  /** TLS towards the token-services (they carry passwords); default plaintext. */
  readonly credentials?: ChannelCredentials;
}

/** Largest Issue answer accepted (a token of a few hundred bytes). */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Pause before trying every endpoint again when none was reachable. */
const UNAVAILABLE_PAUSE_MS = 200;
/** Largest Issue request (a name of at most 64 KiB and a password). */
const MAX_REQUEST_BYTES = 128 * 1024;

export class TokenServiceClient {
  private readonly clients: TokenClient[];
  private cursor = 0;

  constructor(private readonly options: TokenServiceClientOptions) {
    if (options.endpoints.length === 0) throw new TypeError('TokenServiceClient: at least one endpoint');
    const Token = wardTokenGrpc().Token;
    this.clients = options.endpoints.map(
      (address) =>
        new Token(address, options.credentials ?? credentials.createInsecure(), {
          'grpc.max_receive_message_length': MAX_ANSWER_BYTES,
          'grpc.max_send_message_length': MAX_REQUEST_BYTES,
          'grpc.initial_reconnect_backoff_ms': 100,
          'grpc.max_reconnect_backoff_ms': 2000,
          'grpc.enable_retries': 0,
          'grpc.enable_channelz': 0,
        }),
    );
  }

  /** The Authenticator's contract: the token and the revision the password was checked at. */
  async authenticate(name: string, password: Uint8Array, signal?: Cancellation): Promise<AuthenticateOutcome> {
    const deadlineMs = Date.now() + this.options.requestTimeoutMs;
    let lastError: Error = wireError('Unhealthy');
    // Every endpoint in turn; when all are unreachable (restarting, not up yet), again after a
    // pause, until the request's deadline.
    for (let tries = 0; Date.now() < deadlineMs; tries++) {
      if (signal?.aborted) throw wireError('Canceled');
      if (tries > 0 && tries % this.clients.length === 0) await new Promise((resolve) => setTimeout(resolve, Math.min(UNAVAILABLE_PAUSE_MS, Math.max(0, deadlineMs - Date.now()))));
      const index = this.cursor % this.clients.length;
      try {
        const answer = await this.issue(this.clients[index]!, name, password, deadlineMs, signal);
        return { issued: { kind: 'token', token: answer.token }, authRevision: Number(answer.auth_revision), attemptsCount: 1 };
      } catch (error) {
        const code = (error as ServiceError).code;
        if (code !== Status.UNAVAILABLE) throw this.mapped(error as ServiceError);
        lastError = wireError('Unhealthy');
        this.cursor = index + 1;
      }
    }
    throw lastError;
  }

  close(): void {
    for (const client of this.clients) client.close();
  }

  private issue(client: TokenClient, name: string, password: Uint8Array, deadlineMs: number, signal?: Cancellation): Promise<IssueResponse__Output> {
    return new Promise((resolve, reject) => {
      const call = client.Issue({ name: Buffer.from(name, 'utf8'), password: Buffer.from(password) }, { deadline: deadlineMs }, (error: ServiceError | null, answer?: IssueResponse__Output) => {
        signal?.removeEventListener('abort', cancel);
        if (error !== null) reject(error);
        else resolve(answer!);
      });
      const cancel = (): void => call.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  /** The token-service's status as the client sees it: etcd's error when the text is one. */
  private mapped(error: ServiceError): Error {
    if (error.code === Status.CANCELLED) return wireError('Canceled');
    if (error.code === Status.DEADLINE_EXCEEDED) return wireError('Timeout');
    const name = wireErrorNameByMessage(error.details ?? '');
    if (name !== undefined) return wireError(name);
    return new GrpcStatusError(isGrpcStatusCode(error.code) && error.code !== 0 ? error.code : Status.UNKNOWN, error.details ?? '');
  }
}
