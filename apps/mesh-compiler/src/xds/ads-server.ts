/**
 * A state-of-the-world Aggregated Discovery Service (envoy.service.discovery.v3) serving what
 * istiod's gRPC generator serves a proxyless gRPC server: the inbound Listeners it subscribes to
 * (`xds.istio.io/grpc/lds/inbound/<ip>:<port>`), built from the current policy snapshot for the
 * workload its node stands for; and, for xDS clients, the outbound listener, route, cluster and
 * endpoints of the services declared to ward-mesh (./outbound.ts). Names it cannot serve are
 * left out of the response (the resource does not exist).
 *
 * Protocol (xDS "ACK/NACK and resource type instance version"):
 * - every response carries the snapshot version (`version_info`) and a fresh per-stream nonce;
 * - a request whose `response_nonce` is not the last nonce sent for its type is stale: ignored;
 * - a request with the current nonce and no `error_detail` ACKs `version_info`; with
 *   `error_detail` it NACKs the version sent: logged with the client's message, never resent —
 *   the next response for that type is sent only when the resources change;
 * - at most one unacknowledged response per stream and type: a change arriving meanwhile is sent
 *   when the client answers (ACK or NACK), so a client that never answers costs one response.
 * The delta protocol (DeltaAggregatedResources) is answered UNIMPLEMENTED: grpc-js-xds 1.14
 * speaks only state of the world.
 */
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { parseInboundListenerName, planProxylessInboundListener, type Workload } from '@ward/mesh/compiler';
import { encodeEnvoyMessage, findMessageType, MESSAGE_NAMES, TYPE_URL_PREFIX } from '@ward/mesh/envoy-api';
import type { AuthorizationPolicy, PeerAuthentication } from '@ward/mesh/istio-api';
import { workloadOfNode, type DecodedNode } from './node-workload';
import { outboundCluster, outboundEndpoints, outboundListeners, outboundRoute } from './outbound';
import type { MeshService } from './services';

export const XDS_TYPE_URLS = Object.freeze({
  listener: `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`,
  route: `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`,
  cluster: `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`,
  endpoint: `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
});
const KNOWN_TYPES = new Set<string>(Object.values(XDS_TYPE_URLS));

/** The policies served; replaced as a whole (never partially) on every accepted change. */
export interface PolicySnapshot {
  readonly version: string;
  readonly authorizationPolicies: readonly AuthorizationPolicy[];
  readonly peerAuthentications: readonly PeerAuthentication[];
  /** Services declared for xDS clients. */
  readonly services: readonly MeshService[];
}

export interface AdsLimits {
  /** Concurrent ADS streams; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxStreams: number;
  /** Resource names in one request; more end the stream with INVALID_ARGUMENT. */
  readonly maxNamesPerRequest: number;
  /** Largest request message accepted by the gRPC server. */
  readonly maxRequestBytes: number;
  /** NACK records kept for the status view (oldest dropped). */
  readonly maxNackRecords: number;
}

export const DEFAULT_ADS_LIMITS: AdsLimits = Object.freeze({ maxStreams: 10_000, maxNamesPerRequest: 1_000, maxRequestBytes: 1024 * 1024, maxNackRecords: 100 });

/** Minimal logger (pino's shape). */
export interface AdsLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface NackRecord {
  readonly nodeId: string;
  readonly typeUrl: string;
  readonly version: string;
  readonly nonce: string;
  readonly message: string;
}

export interface AdsStatus {
  readonly version: string;
  readonly streams: number;
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly namespace: string; readonly types: Readonly<Record<string, { names: readonly string[]; sent?: string; acked?: string; nacked?: string }>> }>;
  readonly nacks: readonly NackRecord[];
  readonly counters: Readonly<Record<string, number>>;
}

interface Resource {
  readonly name: string;
  readonly bytes: Uint8Array;
}

interface TypeState {
  names: string[];
  sentVersion?: string;
  sentNonce?: string;
  sentDigest?: string;
  ackedVersion?: string;
  nackedVersion?: string;
  /** A response is out and not yet answered. */
  awaiting: boolean;
  /** Resources changed while awaiting an answer. */
  dirty: boolean;
}

interface StreamState {
  readonly call: grpc.ServerDuplexStream<DecodedRequest, unknown>;
  node?: DecodedNode;
  workload?: Workload;
  readonly types: Map<string, TypeState>;
  nonceCounter: number;
}

interface DecodedRequest {
  readonly version_info?: string;
  readonly node?: DecodedNode | null;
  readonly resource_names?: readonly string[];
  readonly type_url?: string;
  readonly response_nonce?: string;
  readonly error_detail?: { readonly code?: number; readonly message?: string } | null;
}

const requestType = findMessageType('envoy.service.discovery.v3.DiscoveryRequest');
const responseType = findMessageType('envoy.service.discovery.v3.DiscoveryResponse');

function decodeRequest(bytes: Buffer): DecodedRequest {
  if (requestType === undefined) throw new Error('DiscoveryRequest is missing from @ward/mesh/envoy-api');
  return requestType.toObject(requestType.decode(bytes), { longs: String, enums: String, defaults: false, oneofs: true, arrays: true }) as DecodedRequest;
}

function encodeResponse(response: object): Buffer {
  if (responseType === undefined) throw new Error('DiscoveryResponse is missing from @ward/mesh/envoy-api');
  return Buffer.from(responseType.encode(responseType.fromObject(response)).finish());
}

/** Entries of the per-snapshot filter-chain cache (cleared when full). */
const MAX_CHAIN_ENTRIES = 10_000;

const SERVICE = '/envoy.service.discovery.v3.AggregatedDiscoveryService/';

const ADS_SERVICE_DEFINITION: grpc.ServiceDefinition = {
  StreamAggregatedResources: {
    path: `${SERVICE}StreamAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: decodeRequest,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (value: Buffer) => value,
  },
  DeltaAggregatedResources: {
    path: `${SERVICE}DeltaAggregatedResources`,
    requestStream: true,
    responseStream: true,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (value: Buffer) => value,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (value: Buffer) => value,
  },
};

export interface AdsServerOptions {
  readonly logger: AdsLogger;
  readonly snapshot: PolicySnapshot;
  readonly limits?: Partial<AdsLimits>;
  readonly rootNamespace?: string;
  readonly defaultNamespace?: string;
  /** Server credentials (default: plaintext). `adsTlsCredentials` makes them mTLS. */
  readonly credentials?: grpc.ServerCredentials;
}

/** PEM material of `--xds-tls-cert/--xds-tls-key/--xds-tls-ca`. */
export interface AdsTlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

/**
 * mTLS for the ADS port: the server presents `cert`/`key`, and a client must present a certificate
 * that chains to `ca` (the mesh CA), or the handshake fails before any xDS request is read.
 */
export function adsTlsCredentials(material: AdsTlsMaterial): grpc.ServerCredentials {
  return grpc.ServerCredentials.createSsl(material.ca, [{ private_key: material.key, cert_chain: material.cert }], true);
}

export class AdsServer {
  private readonly server: grpc.Server;
  private readonly streams = new Set<StreamState>();
  private readonly limits: AdsLimits;
  private snapshot: PolicySnapshot;
  private readonly nacks: NackRecord[] = [];
  /**
   * Encoded filter chains of the current snapshot by chain key (mode and selected policies): built
   * once and shared by every listener with the same key; `null` when they could not be encoded.
   */
  private readonly chains = new Map<string, Uint8Array | null>();
  private readonly counters: Record<string, number> = { requests: 0, responses: 0, acks: 0, nacks: 0, stale: 0, unknownType: 0, refused: 0, pushes: 0 };

  constructor(private readonly options: AdsServerOptions) {
    this.limits = { ...DEFAULT_ADS_LIMITS, ...(options.limits ?? {}) };
    this.snapshot = options.snapshot;
    this.server = new grpc.Server({ 'grpc.max_receive_message_length': this.limits.maxRequestBytes });
    this.server.addService(ADS_SERVICE_DEFINITION, {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DecodedRequest, unknown>) => this.onStream(call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
        call.on('error', () => undefined);
        call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'ward-mesh serves state-of-the-world ADS only' });
      },
    });
  }

  /** Binds `address` (`host:port`, port 0 picks one) and resolves with the bound port. */
  async listen(address: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, this.options.credentials ?? grpc.ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port)));
    });
  }

  async close(): Promise<void> {
    for (const stream of this.streams) stream.call.end();
    this.streams.clear();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }

  get version(): string {
    return this.snapshot.version;
  }

  /** Replaces the snapshot and pushes changed resources to every subscribed stream. */
  setSnapshot(snapshot: PolicySnapshot): void {
    this.snapshot = snapshot;
    this.chains.clear();
    for (const stream of this.streams) {
      for (const [typeUrl, state] of stream.types) {
        if (state.awaiting) {
          state.dirty = true;
          continue;
        }
        this.respond(stream, typeUrl, state, false);
      }
    }
  }

  status(): AdsStatus {
    return {
      version: this.snapshot.version,
      streams: this.streams.size,
      nodes: [...this.streams].map((s) => ({
        id: s.node?.id ?? '',
        namespace: s.workload?.namespace ?? '',
        types: Object.fromEntries(
          [...s.types].map(([t, st]) => [
            t,
            { names: st.names, ...(st.sentVersion !== undefined ? { sent: st.sentVersion } : {}), ...(st.ackedVersion !== undefined ? { acked: st.ackedVersion } : {}), ...(st.nackedVersion !== undefined ? { nacked: st.nackedVersion } : {}) },
          ]),
        ),
      })),
      nacks: [...this.nacks],
      counters: { ...this.counters },
    };
  }

  private onStream(call: grpc.ServerDuplexStream<DecodedRequest, unknown>): void {
    if (this.streams.size >= this.limits.maxStreams) {
      this.count('refused');
      call.on('error', () => undefined);
      call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: `more than ${this.limits.maxStreams} ADS streams` });
      return;
    }
    const stream: StreamState = { call, types: new Map(), nonceCounter: 0 };
    this.streams.add(stream);
    const drop = () => this.streams.delete(stream);
    call.on('data', (request: DecodedRequest) => {
      try {
        this.onRequest(stream, request);
      } catch (error) {
        this.options.logger.warn({ err: String(error), node: stream.node?.id }, 'xds request failed');
        this.fail(stream, grpc.status.INTERNAL, 'request could not be handled');
      }
    });
    call.on('end', () => {
      drop();
      call.end();
    });
    call.on('error', drop);
    call.on('close', drop);
  }

  private fail(stream: StreamState, code: grpc.status, details: string): void {
    this.streams.delete(stream);
    stream.call.emit('error', { code, details });
  }

  private count(name: string): void {
    this.counters[name] = (this.counters[name] ?? 0) + 1;
  }

  private onRequest(stream: StreamState, request: DecodedRequest): void {
    this.count('requests');
    if (stream.node === undefined) {
      if (request.node === undefined || request.node === null) {
        this.fail(stream, grpc.status.INVALID_ARGUMENT, 'the first request of a stream must carry node');
        return;
      }
      stream.node = request.node;
      stream.workload = workloadOfNode(request.node);
      this.options.logger.info({ node: request.node.id, namespace: stream.workload.namespace, labels: stream.workload.labels }, 'xds node connected');
    }
    const typeUrl = request.type_url ?? '';
    if (!KNOWN_TYPES.has(typeUrl)) {
      this.count('unknownType');
      this.options.logger.debug({ node: stream.node.id, typeUrl: typeUrl.slice(0, 200) }, 'xds request for an unknown type ignored');
      return;
    }
    const names = request.resource_names ?? [];
    if (names.length > this.limits.maxNamesPerRequest) {
      this.fail(stream, grpc.status.INVALID_ARGUMENT, `more than ${this.limits.maxNamesPerRequest} resource names`);
      return;
    }
    const wanted = [...new Set(names)].sort();
    let state = stream.types.get(typeUrl);
    const nonce = request.response_nonce ?? '';
    if (state === undefined) {
      state = { names: wanted, awaiting: false, dirty: false };
      stream.types.set(typeUrl, state);
      this.respond(stream, typeUrl, state, true);
      return;
    }
    if (nonce !== '' && nonce !== state.sentNonce) {
      this.count('stale');
      return;
    }
    const namesChanged = wanted.join('\n') !== state.names.join('\n');
    state.names = wanted;
    if (nonce === '') {
      // A new subscription request without a nonce (e.g. after a reconnect on the same stream).
      this.respond(stream, typeUrl, state, true);
      return;
    }
    state.awaiting = false;
    if (request.error_detail !== undefined && request.error_detail !== null) {
      this.count('nacks');
      state.nackedVersion = state.sentVersion;
      const record: NackRecord = { nodeId: stream.node.id ?? '', typeUrl, version: state.sentVersion ?? '', nonce, message: (request.error_detail.message ?? '').slice(0, 4096) };
      this.nacks.push(record);
      if (this.nacks.length > this.limits.maxNackRecords) this.nacks.shift();
      this.options.logger.warn({ node: record.nodeId, typeUrl, version: record.version, nonce, acceptedVersion: request.version_info ?? '', error: record.message }, 'xds NACK: the client rejected the resources; keeping them until the configuration changes');
    } else {
      this.count('acks');
      state.ackedVersion = request.version_info ?? '';
    }
    if (namesChanged || state.dirty) this.respond(stream, typeUrl, state, namesChanged);
  }

  private resourcesFor(stream: StreamState, typeUrl: string, names: readonly string[]): Resource[] {
    if (stream.workload === undefined) return [];
    if (typeUrl !== XDS_TYPE_URLS.listener) return this.outboundResources(stream, typeUrl, names);
    const out: Resource[] = [];
    for (const name of names) {
      if (parseInboundListenerName(name) === undefined) {
        for (const listener of outboundListeners(name, stream.workload.namespace, this.snapshot.services)) this.pushEncoded(out, stream, MESSAGE_NAMES.listener, listener.name, listener.json);
        continue;
      }
      const plan = planProxylessInboundListener({
        listenerName: name,
        workload: stream.workload,
        authorizationPolicies: this.snapshot.authorizationPolicies,
        peerAuthentications: this.snapshot.peerAuthentications,
        ...(this.options.rootNamespace !== undefined ? { rootNamespace: this.options.rootNamespace } : {}),
        ...(this.options.defaultNamespace !== undefined ? { defaultNamespace: this.options.defaultNamespace } : {}),
      });
      if (plan.kind === 'none') continue;
      let chains = this.chains.get(plan.chainKey);
      if (chains === undefined) {
        // A Listener with only filter_chains encodes to exactly its field-3 entries; protobuf
        // merges concatenated encodings, so name + address + these bytes is the whole listener.
        const encoded = encodeEnvoyMessage(MESSAGE_NAMES.listener, { filterChains: plan.buildFilterChains().filterChains });
        if (!encoded.ok) this.options.logger.warn({ node: stream.node?.id, listener: name, issues: encoded.issues.slice(0, 5) }, 'xds listener not encodable; not served');
        chains = encoded.ok ? encoded.bytes : null;
        if (this.chains.size >= MAX_CHAIN_ENTRIES) this.chains.clear();
        this.chains.set(plan.chainKey, chains);
      }
      if (chains === null) continue;
      const head = encodeEnvoyMessage(MESSAGE_NAMES.listener, { name, address: { socketAddress: { address: plan.host, portValue: plan.port } } });
      if (!head.ok) continue;
      out.push({ name, bytes: Buffer.concat([head.bytes, chains]) });
    }
    return out;
  }

  private outboundResources(stream: StreamState, typeUrl: string, names: readonly string[]): Resource[] {
    const out: Resource[] = [];
    const namespace = stream.workload?.namespace ?? 'default';
    const services = this.snapshot.services;
    for (const name of names) {
      if (typeUrl === XDS_TYPE_URLS.route) this.pushEncoded(out, stream, MESSAGE_NAMES.routeConfiguration, name, outboundRoute(name, namespace, services));
      else if (typeUrl === XDS_TYPE_URLS.cluster) this.pushEncoded(out, stream, MESSAGE_NAMES.cluster, name, outboundCluster(name, services));
      else if (typeUrl === XDS_TYPE_URLS.endpoint) this.pushEncoded(out, stream, MESSAGE_NAMES.clusterLoadAssignment, name, outboundEndpoints(name, services));
    }
    return out;
  }

  private pushEncoded(out: Resource[], stream: StreamState, messageName: string, name: string, json: object | undefined): void {
    if (json === undefined || out.some((r) => r.name === name)) return;
    const encoded = encodeEnvoyMessage(messageName, json);
    if (!encoded.ok) {
      this.options.logger.warn({ node: stream.node?.id, resource: name, issues: encoded.issues.slice(0, 5) }, 'xds resource not encodable; not served');
      return;
    }
    out.push({ name, bytes: encoded.bytes });
  }

  /** Sends the type's resources when they differ from what was last sent (or `force`). */
  private respond(stream: StreamState, typeUrl: string, state: TypeState, force: boolean): void {
    const resources = this.resourcesFor(stream, typeUrl, state.names);
    const hash = createHash('sha256');
    for (const r of resources) hash.update(r.name).update('\0').update(r.bytes).update('\0');
    const digest = hash.digest('hex');
    state.dirty = false;
    if (!force && digest === state.sentDigest) return;
    stream.nonceCounter += 1;
    const nonce = String(stream.nonceCounter);
    const version = this.snapshot.version;
    const response = {
      version_info: version,
      type_url: typeUrl,
      nonce,
      resources: resources.map((r) => ({ type_url: typeUrl, value: r.bytes })),
      control_plane: { identifier: 'ward-mesh' },
    };
    state.sentVersion = version;
    state.sentNonce = nonce;
    state.sentDigest = digest;
    state.awaiting = true;
    this.count(force ? 'responses' : 'pushes');
    stream.call.write(encodeResponse(response));
  }
}
