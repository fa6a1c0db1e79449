// Test support: grpc-js clients of etcd's services (built from @ward/etcd/proto), promisified,
// with the token in metadata as etcd's Go client sends it.
import { credentials, Metadata, type Client, type ServiceError } from '@grpc/grpc-js';
import { etcdGrpc, type EtcdServiceName } from '@ward/etcd/proto';

export type CallResult<T> = { ok: true; value: T } | { ok: false; code: number; details: string };

export interface EtcdTestClient {
  call<T = Record<string, unknown>>(service: EtcdServiceName, method: string, request: object, token?: string, metadataKey?: string): Promise<CallResult<T>>;
  client(service: EtcdServiceName): Client;
  close(): void;
}

/** Clients for every etcd service at `address`, sending up to `maxSendBytes`. */
export function etcdTestClient(address: string, maxSendBytes = 64 * 1024 * 1024): EtcdTestClient {
  const pkg = etcdGrpc().etcdserverpb as unknown as Record<string, new (address: string, creds: unknown, options: object) => Client>;
  const clients = new Map<EtcdServiceName, Client>();
  const client = (service: EtcdServiceName): Client => {
    let existing = clients.get(service);
    if (existing === undefined) {
      existing = new pkg[service]!(address, credentials.createInsecure(), { 'grpc.max_send_message_length': maxSendBytes, 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
      clients.set(service, existing);
    }
    return existing;
  };
  return {
    client,
    call<T>(service: EtcdServiceName, method: string, request: object, token?: string, metadataKey = 'token'): Promise<CallResult<T>> {
      const metadata = new Metadata();
      if (token !== undefined) metadata.set(metadataKey, token);
      const target = client(service) as unknown as Record<string, (r: object, m: Metadata, o: object, cb: (e: ServiceError | null, v: T) => void) => void>;
      return new Promise((resolve) => {
        target[method]!.call(client(service), request, metadata, { deadline: Date.now() + 20_000 }, (error, value) =>
          resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, value }),
        );
      });
    },
    close() {
      for (const c of clients.values()) c.close();
    },
  };
}

/** The value of a call that must succeed. */
export async function must<T = Record<string, unknown>>(result: Promise<CallResult<T>>, what = 'call'): Promise<T> {
  const settled = await result;
  if (!settled.ok) throw new Error(`${what} failed: ${settled.code} ${settled.details}`);
  return settled.value;
}

/** A simple or JWT token of `name`. */
export async function login(etcd: EtcdTestClient, name: string, password: string): Promise<string> {
  return (await must<{ token: string }>(etcd.call('Auth', 'Authenticate', { name, password }), `Authenticate ${name}`)).token;
}

/** root (with the root role), then auth enabled: where most auth scenarios start. */
export async function enableAuthAsRoot(etcd: EtcdTestClient, rootPassword: string): Promise<void> {
  await must(etcd.call('Auth', 'UserAdd', { name: 'root', password: rootPassword }), 'UserAdd root');
  await must(etcd.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' }), 'grant root');
  await must(etcd.call('Auth', 'AuthEnable', {}), 'AuthEnable');
}
