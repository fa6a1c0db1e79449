import { credentials, Metadata, status, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { etcdGrpc, type EtcdServiceName } from '@ward/etcd/proto';

/** Deadline of one unary call unless the caller says otherwise. */
const CALL_DEADLINE_MS = 15_000;
/** Largest message the test client accepts or sends (above etcd's limits, so the server decides). */
const CLIENT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The outcome of one unary call: the decoded response, or the gRPC status code and details. */
export type GrpcOutcome<T = Record<string, unknown>> =
  | { readonly ok: true; readonly response: T }
  | { readonly ok: false; readonly code: number; readonly details: string };

/** Per-call credentials and overrides. */
export interface CallOptions {
  /** Sent as metadata `token` (what etcd's Go client does). */
  readonly token?: string;
  /** Sent as metadata `authorization` (what etcd's JSON gateway does), e.g. `Bearer x`. */
  readonly authorization?: string;
  readonly deadlineMs?: number;
}

/**
 * A plain grpc-js client for etcd's v3 services built from etcd's own protos: the same code talks
 * to real etcd and to ward, which is what makes differential tests and benchmarks fair. Every call
 * resolves (never rejects) with a {@link GrpcOutcome}.
 */
export class EtcdGrpcClient {
  private readonly clients = new Map<EtcdServiceName, Client>();

  constructor(readonly endpoint: string) {}

  private client(service: EtcdServiceName): Client {
    let client = this.clients.get(service);
    if (client === undefined) {
      const Constructor = etcdGrpc().etcdserverpb[service] as unknown as new (
        address: string,
        creds: ReturnType<typeof credentials.createInsecure>,
        options: Record<string, unknown>,
      ) => Client;
      client = new Constructor(this.endpoint, credentials.createInsecure(), {
        'grpc.max_receive_message_length': CLIENT_MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': CLIENT_MAX_MESSAGE_BYTES,
        // One connection per service client and per EtcdGrpcClient, so load generators really open
        // as many connections as they say.
        'grpc.use_local_subchannel_pool': 1,
      });
      this.clients.set(service, client);
    }
    return client;
  }

  /** Calls `service.method(request)` with the given credentials. */
  call<T = Record<string, unknown>>(
    service: EtcdServiceName,
    method: string,
    request: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<GrpcOutcome<T>> {
    const client = this.client(service) as unknown as Record<string, unknown>;
    const fn = client[method];
    if (typeof fn !== 'function') throw new TypeError(`EtcdGrpcClient: no method ${service}.${method}`);
    const deadline = new Date(Date.now() + (options.deadlineMs ?? CALL_DEADLINE_MS));
    return new Promise((resolvePromise) => {
      (fn as (...args: unknown[]) => unknown).call(
        client,
        request,
        callMetadata(options),
        { deadline },
        (error: ServiceError | null, response: T) => {
          if (error) resolvePromise({ ok: false, code: error.code ?? status.UNKNOWN, details: error.details ?? error.message });
          else resolvePromise({ ok: true, response });
        },
      );
    });
  }

  /**
   * Sends pre-encoded request bytes to `/etcdserverpb.<service>/<method>` and returns the raw
   * answer bytes: for malformed or hand-built messages the proto serializer would refuse.
   */
  rawUnary(service: EtcdServiceName, method: string, requestBytes: Uint8Array, options: CallOptions = {}): Promise<GrpcOutcome<Buffer>> {
    const client = this.client(service);
    const identity = (value: Buffer): Buffer => value;
    const deadline = new Date(Date.now() + (options.deadlineMs ?? CALL_DEADLINE_MS));
    return new Promise((resolvePromise) => {
      client.makeUnaryRequest<Buffer, Buffer>(
        `/etcdserverpb.${service}/${method}`,
        identity,
        identity,
        Buffer.from(requestBytes),
        callMetadata(options),
        { deadline },
        (error, response) => {
          if (error) resolvePromise({ ok: false, code: error.code ?? status.UNKNOWN, details: error.details ?? error.message });
          else resolvePromise({ ok: true, response: response ?? Buffer.alloc(0) });
        },
      );
    });
  }

  /** Authenticate and return the token, or throw with the status. */
  async authenticate(name: string, password: string, options: CallOptions = {}): Promise<string> {
    const outcome = await this.call<{ token: string }>('Auth', 'Authenticate', { name, password }, options);
    if (!outcome.ok) throw new Error(`Authenticate(${name}) failed: code ${outcome.code} ${outcome.details}`);
    return outcome.response.token;
  }

  /** Opens a Watch stream carrying `options`' credentials for its whole life. */
  watch(options: CallOptions = {}): ClientDuplexStream<Record<string, unknown>, Record<string, unknown>> {
    const client = this.client('Watch') as unknown as {
      Watch(metadata: Metadata): ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>;
    };
    return client.Watch(callMetadata(options));
  }

  /** Closes every channel. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

function callMetadata(options: CallOptions): Metadata {
  const metadata = new Metadata();
  if (options.token !== undefined) metadata.set('token', options.token);
  if (options.authorization !== undefined) metadata.set('authorization', options.authorization);
  return metadata;
}
