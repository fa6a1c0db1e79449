// Every proposed or read request goes through here: resolve the caller's token to an identity,
// stamp it into the ApplyRequest header, check the size, and hand the entry to the cluster.
import { encodeProposal } from '@ward/etcd/api-mapping';
import { ApplyError, encodeApplyRequest, type ApplyOperation, type ApplyRequest } from '@ward/etcd/apply';
import { isWireError, wireError } from '@ward/etcd/wire-errors';
import type { IdentityResolver } from '../identity/identity-resolver';
import type { Credentials, Identity, ResolvedIdentity } from '../identity/identity';
import type { InFlightBounds } from './in-flight';
import type { RequestIds } from './request-ids';
import type { Cancellation } from '@ward/platform/grpc-server';

/**
 * A read as the transport gets it: the request itself (a read replica answers from it), and its
 * entry, encoded only when a member is asked (once).
 */
export interface ReadEntry {
  readonly request: ApplyRequest;
  /** The encoded entry; `request is too large` past the read bound. */
  bytes(): Uint8Array;
}

/** Where the executor sends what it stamped: the cluster client, or the read replica in front of it. */
export interface EntryTransport {
  propose(entry: Uint8Array, signal?: Cancellation): Promise<Buffer>;
  read(entry: ReadEntry, serializable: boolean, signal?: Cancellation): Promise<Buffer>;
}

/** The cluster client's calls, which take encoded entries. */
export interface EncodedEntryTransport {
  propose(entry: Uint8Array, signal?: Cancellation): Promise<Buffer>;
  read(entry: Uint8Array, serializable: boolean, signal?: Cancellation): Promise<Buffer>;
}

/** An EntryTransport that asks the members for every read (no read replica). */
export function membersOnly(cluster: EncodedEntryTransport): EntryTransport {
  return {
    propose: (entry, signal) => cluster.propose(entry, signal),
    read: async (entry, serializable, signal) => cluster.read(entry.bytes(), serializable, signal),
  };
}

export interface RequestExecutorOptions {
  readonly transport: EntryTransport;
  readonly identities: IdentityResolver;
  readonly ids: RequestIds;
  /** etcd's --max-request-bytes: larger proposals get `request is too large`. */
  readonly maxRequestBytes: number;
  /** Reads are not proposals (etcd does not size-check them); still bounded by the gRPC limit. */
  readonly maxReadEntryBytes: number;
  /** Per-caller bounds on requests in flight (none: unbounded, for tests of other things). */
  readonly inFlight?: InFlightBounds;
}

export type { Credentials } from '../identity/identity';

export class RequestExecutor {
  constructor(private readonly options: RequestExecutorOptions) {}

  /** Resolves the identity only (for RPCs the gateway answers without the log). */
  identify(credentials: Credentials, signal?: Cancellation): Promise<ResolvedIdentity> {
    return this.options.identities.identify(credentials, signal);
  }

  /** Proposes `operation` as the caller; resolves to the encoded etcd response. */
  propose(credentials: Credentials, operation: ApplyOperation, signal?: Cancellation): Promise<Buffer> {
    return this.asCaller(credentials, signal, (identity) =>
      this.options.transport.propose(encodeProposal(this.request(identity, operation), this.options.maxRequestBytes), signal),
    );
  }

  /** Reads (Range, read-only Txn) as the caller. */
  read(credentials: Credentials, operation: ApplyOperation, serializable: boolean, signal?: Cancellation): Promise<Buffer> {
    return this.asCaller(credentials, signal, (identity) => this.options.transport.read(this.readEntry(this.request(identity, operation)), serializable, signal));
  }

  /** Runs `send` with the caller's identity (for RPCs answered by a member outside the log). */
  asIdentity<T>(credentials: Credentials, send: (identity: Identity) => Promise<T>, signal?: Cancellation): Promise<T> {
    return this.asCaller(credentials, signal, send);
  }

  /** Runs `send` with the caller's identity, within the caller's in-flight bound. */
  private async asCaller<T>(credentials: Credentials, signal: Cancellation | undefined, send: (identity: Identity) => Promise<T>): Promise<T> {
    const identity = await this.options.identities.identify(credentials, signal);
    const bounds = this.options.inFlight;
    if (bounds === undefined) return this.sendAs(credentials, identity, signal, send);
    const slot = bounds.take(identity.username, credentials.address ?? '');
    if (slot === undefined) throw wireError('TooManyRequests');
    try {
      return await this.sendAs(credentials, identity, signal, send);
    } finally {
      bounds.give(slot);
    }
  }

  /**
   * A simple-token or certificate identity served from the short cache may carry a revision that
   * an auth change has just passed; the cluster then refuses the request without applying it
   * (`revision of auth store is old`), so it is safe to resolve the identity afresh and send once
   * more — the new attempt is checked against the current state.
   */
  private async sendAs<T>(credentials: Credentials, identity: ResolvedIdentity, signal: Cancellation | undefined, send: (identity: Identity) => Promise<T>): Promise<T> {
    try {
      return await send(identity);
    } catch (error) {
      if (!identity.cached || !isWireError(error, 'AuthOldRevision')) throw error;
      this.options.identities.forget(credentials);
      return send(await this.options.identities.identify(credentials, signal));
    }
  }

  private request(identity: Identity, operation: ApplyOperation): ApplyRequest {
    return { header: { id: this.options.ids.next(), username: identity.username, authRevision: identity.authRevision }, operation };
  }

  /** A read's entry, encoded on first use (a read the replica answers never is). */
  private readEntry(request: ApplyRequest): ReadEntry {
    const maxEntryBytes = this.options.maxReadEntryBytes;
    let encoded: Uint8Array | undefined;
    return {
      request,
      bytes: () => (encoded ??= encodeRead(request, maxEntryBytes)),
    };
  }
}

/** Reads are not proposals: etcd does not size-check them, only the gRPC limit applies. */
function encodeRead(request: ApplyRequest, maxEntryBytes: number): Uint8Array {
  try {
    return encodeApplyRequest(request, { maxEntryBytes });
  } catch (error) {
    if (error instanceof ApplyError && error.code === 'ERR_APPLY_ENTRY_TOO_LARGE') throw wireError('RequestTooLarge');
    throw error;
  }
}
