/**
 * The ADS server against raw clients over loopback: the xDS version/nonce protocol (ACK, NACK,
 * stale nonces), pushes, and bad clients (no node, malformed bytes, unknown type URLs, clients
 * that never ACK, many nodes, too many streams, the delta protocol).
 */
import * as grpc from '@grpc/grpc-js';
import { findMessageType } from '@ward/mesh/envoy-api';
import { loadResources, type AuthorizationPolicy } from '@ward/mesh/istio-api';
import { afterEach, describe, expect, it } from 'vitest';
import { AdsServer, XDS_TYPE_URLS, type AdsLogger, type PolicySnapshot } from '../src/xds/ads-server';

const requestType = findMessageType('envoy.service.discovery.v3.DiscoveryRequest');
const responseType = findMessageType('envoy.service.discovery.v3.DiscoveryResponse');
const listenerType = findMessageType('envoy.config.listener.v3.Listener');
if (requestType === undefined || responseType === undefined || listenerType === undefined) throw new Error('discovery messages missing');

interface Response {
  version_info: string;
  nonce: string;
  type_url: string;
  resources: Array<{ type_url: string; value: Uint8Array }>;
}

const SAS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const LISTENER = 'xds.istio.io/grpc/lds/inbound/127.0.0.1:50051';
const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };
const warnings: Array<{ obj: object; msg?: string }> = [];
const recording = { info: () => undefined, debug: () => undefined, warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) };

function snapshot(version: string, yaml: string): PolicySnapshot {
  const resources = loadResources(yaml, { sourceName: 'p.yaml' }).resources.map((r) => r.resource);
  return { version, authorizationPolicies: resources.filter((r): r is AuthorizationPolicy => r.kind === 'AuthorizationPolicy'), peerAuthentications: [], services: [] };
}

const denyPath = (path: string) => `apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: d\n  namespace: foo\nspec:\n  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["${path}"]\n`;

const node = (id: string) => ({ id: `sidecar~127.0.0.1~${id}.foo~foo.svc.cluster.local`, metadata: { fields: { NAMESPACE: { stringValue: 'foo' } } } });

function encodeRequest(request: object): Buffer {
  return Buffer.from(requestType!.encode(requestType!.fromObject(request)).finish());
}

class RawStream {
  readonly responses: Response[] = [];
  status?: grpc.StatusObject;
  private waiters: Array<() => void> = [];
  readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;

  constructor(client: grpc.Client, path = SAS) {
    this.call = client.makeBidiStreamRequest(path, (b: Buffer) => b, (b: Buffer) => b);
    this.call.on('data', (bytes: Buffer) => {
      this.responses.push(responseType!.toObject(responseType!.decode(bytes), { longs: String, defaults: true, arrays: true }) as Response);
      this.notify();
    });
    this.call.on('status', (s: grpc.StatusObject) => {
      this.status = s;
      this.notify();
    });
    this.call.on('error', () => undefined);
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  send(request: object): void {
    this.call.write(encodeRequest(request));
  }

  async next(count: number, timeoutMs = 5_000): Promise<Response> {
    const deadline = Date.now() + timeoutMs;
    while (this.responses.length < count && this.status === undefined) {
      if (Date.now() > deadline) throw new Error(`expected ${count} responses, have ${this.responses.length}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
    const response = this.responses[count - 1];
    if (response === undefined) throw new Error(`stream ended: ${JSON.stringify(this.status)}`);
    return response;
  }

  async ended(timeoutMs = 5_000): Promise<grpc.StatusObject> {
    const deadline = Date.now() + timeoutMs;
    while (this.status === undefined) {
      if (Date.now() > deadline) throw new Error('stream did not end');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.status;
  }
}

const settle = () => new Promise((r) => setTimeout(r, 150));

describe('ADS server protocol', () => {
  let server: AdsServer | undefined;
  let client: grpc.Client | undefined;

  afterEach(async () => {
    client?.close();
    await server?.close();
    warnings.length = 0;
  });

  async function start(snap: PolicySnapshot, limits: object = {}, logger: AdsLogger = silent): Promise<grpc.Client> {
    server = new AdsServer({ logger, snapshot: snap, limits });
    const port = await server.listen('127.0.0.1:0');
    client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return client;
  }

  it('answers with versions and nonces, ignores stale nonces, records ACKs and NACKs and never resends a NACKed version', async () => {
    const c = await start(snapshot('1', denyPath('/a')), {}, recording);
    const s = new RawStream(c);
    s.send({ node: node('n1'), type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] });
    const first = await s.next(1);
    expect(first).toMatchObject({ version_info: '1', nonce: '1', type_url: XDS_TYPE_URLS.listener });
    expect(first.resources).toHaveLength(1);
    const listener = listenerType!.toObject(listenerType!.decode(first.resources[0]!.value)) as { name: string };
    expect(listener.name).toBe(LISTENER);
    // ACK.
    s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '1' });
    await settle();
    expect(server!.status().nodes[0]?.types[XDS_TYPE_URLS.listener]).toMatchObject({ sent: '1', acked: '1' });
    // A push on change.
    server!.setSnapshot(snapshot('2', denyPath('/b')));
    const second = await s.next(2);
    expect(second).toMatchObject({ version_info: '2', nonce: '2' });
    // A stale nonce is ignored, even with an error.
    s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '1', error_detail: { code: 3, message: 'stale' } });
    await settle();
    expect(server!.status().nacks).toEqual([]);
    expect(server!.status().counters['stale']).toBe(1);
    // NACK of version 2: recorded and logged with the client's message, not resent.
    s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '2', error_detail: { code: 3, message: 'bad listener' } });
    await settle();
    expect(server!.status().nacks).toEqual([{ nodeId: node('n1').id, typeUrl: XDS_TYPE_URLS.listener, version: '2', nonce: '2', message: 'bad listener' }]);
    expect(server!.status().nodes[0]?.types[XDS_TYPE_URLS.listener]).toMatchObject({ sent: '2', acked: '1', nacked: '2' });
    expect(warnings.some((w) => (w.obj as { error?: string }).error === 'bad listener' && (w.obj as { version?: string }).version === '2')).toBe(true);
    expect(s.responses).toHaveLength(2);
    // A snapshot whose resources for this node are the same is not sent either.
    server!.setSnapshot(snapshot('3', denyPath('/b')));
    await settle();
    expect(s.responses).toHaveLength(2);
    // A real change is.
    server!.setSnapshot(snapshot('4', denyPath('/c')));
    expect(await s.next(3)).toMatchObject({ version_info: '4', nonce: '3' });
    s.call.end();
  });

  it('keeps one unanswered response per stream and type for a client that never ACKs; sends the latest when it answers', async () => {
    const c = await start(snapshot('1', denyPath('/a')));
    const s = new RawStream(c);
    s.send({ node: node('lazy'), type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] });
    await s.next(1);
    for (let i = 2; i <= 50; i += 1) server!.setSnapshot(snapshot(String(i), denyPath(`/p${i}`)));
    await settle();
    expect(s.responses).toHaveLength(1);
    s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '1' });
    expect(await s.next(2)).toMatchObject({ version_info: '50', nonce: '2' });
    await settle();
    expect(s.responses).toHaveLength(2);
    s.call.end();
  });

  it('answers an undeclared service with an empty set, ignores unknown type URLs, refuses streams without node', async () => {
    const c = await start(snapshot('1', ''));
    const s = new RawStream(c);
    s.send({ node: node('n'), type_url: 'type.googleapis.com/not.a.Type', resource_names: ['x'] });
    s.send({ type_url: XDS_TYPE_URLS.cluster, resource_names: ['outbound|80||a.b'] });
    expect(await s.next(1)).toMatchObject({ type_url: XDS_TYPE_URLS.cluster, resources: [] });
    expect(server!.status().counters['unknownType']).toBe(1);
    s.call.end();

    const noNode = new RawStream(c);
    noNode.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] });
    expect((await noNode.ended()).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('survives malformed bytes, too many names, too many streams and the delta protocol', async () => {
    const c = await start(snapshot('1', ''), { maxStreams: 3, maxNamesPerRequest: 10 });
    const garbage = c.makeBidiStreamRequest(SAS, (b: Buffer) => b, (b: Buffer) => b);
    const garbageStatus = new Promise<grpc.StatusObject>((r) => garbage.on('status', r));
    garbage.on('error', () => undefined);
    garbage.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    expect((await garbageStatus).code).not.toBe(grpc.status.OK);

    const many = new RawStream(c);
    many.send({ node: node('many'), type_url: XDS_TYPE_URLS.listener, resource_names: Array.from({ length: 11 }, (_, i) => `n${i}`) });
    expect((await many.ended()).code).toBe(grpc.status.INVALID_ARGUMENT);

    const delta = new RawStream(c, '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources');
    delta.call.write(Buffer.alloc(0));
    expect((await delta.ended()).code).toBe(grpc.status.UNIMPLEMENTED);

    const open = [new RawStream(c), new RawStream(c), new RawStream(c)];
    open.forEach((s, i) => s.send({ node: node(`o${i}`), type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] }));
    await Promise.all(open.map((s) => s.next(1)));
    const refused = new RawStream(c);
    refused.send({ node: node('over'), type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] });
    expect((await refused.ended()).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Still serving the open streams.
    server!.setSnapshot(snapshot('2', denyPath('/z')));
    open.forEach((s) => s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '1' }));
    for (const s of open) expect(await s.next(2)).toMatchObject({ version_info: '2' });
    for (const s of open) s.call.end();
  });

  it('pushes a change to 1,000 subscribed nodes', async () => {
    const c = await start(snapshot('1', ''));
    const streams = Array.from({ length: 1_000 }, () => new RawStream(c));
    streams.forEach((s, i) => s.send({ node: node(`w${i}`), type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER] }));
    await Promise.all(streams.map((s) => s.next(1, 30_000)));
    streams.forEach((s) => s.send({ type_url: XDS_TYPE_URLS.listener, resource_names: [LISTENER], version_info: '1', response_nonce: '1' }));
    await settle();
    expect(server!.status().streams).toBe(1_000);
    server!.setSnapshot(snapshot('2', denyPath('/all')));
    const pushed = await Promise.all(streams.map((s) => s.next(2, 30_000)));
    expect(pushed.every((r) => r.version_info === '2' && r.resources.length === 1)).toBe(true);
    for (const s of streams) s.call.end();
  });
});
