// Puts this replica's public keys into the cluster's signing-key directory (admin-only operations
// proposed as the configured publishing user), so that every gateway verifies what any replica
// signs. A key is published before it signs; a key of ours that left the directory (revoked
// through another replica) or is refused as revoked is dropped here too and replaced.
import { encodeApplyRequest, type ApplyOperation, type SigningKeyRecord } from '@ward/etcd/apply';
import { decodeApplyResponse } from '@ward/etcd/api-mapping';
import { isWireError } from '@ward/etcd/wire-errors';
import type { Logger } from '@ward/platform/logging';
import type { Clock } from '@ward/shared/clock';
import type { AuthReader } from './auth-reader';
import type { KeyRing, ScheduledKey } from './key-ring';

export interface KeyPublisherOptions {
  readonly cluster: AuthReader;
  readonly ring: KeyRing;
  /** Who proposes the publications (a user with the root role once auth is on). */
  readonly publishUser: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

function recordOf(key: ScheduledKey): SigningKeyRecord {
  return {
    keyId: key.keyId,
    alg: key.key.alg,
    publicJwk: JSON.stringify(key.key.publicJwk),
    notBeforeSeconds: Math.floor(key.notBeforeMs / 1000),
    retireAfterSeconds: Number.isFinite(key.retireAfterMs) ? Math.ceil(key.retireAfterMs / 1000) : 0,
  };
}

export class KeyPublisher {
  /** kid → the record the directory acknowledged. */
  private readonly published = new Map<string, string>();
  /** kid → the publication count when it was acknowledged (orders acknowledgements and reads). */
  private readonly acknowledgedAt = new Map<string, number>();
  private acknowledgements = 0;
  private syncing: Promise<void> | undefined;
  /** The cluster's directory as last read (every replica's keys). */
  private directory: readonly SigningKeyRecord[] = [];

  constructor(private readonly options: KeyPublisherOptions) {}

  /** Whether every key of the ring is in the directory as it is now. */
  get upToDate(): boolean {
    return this.options.ring.published().every((key) => this.published.get(key.keyId) === JSON.stringify(recordOf(key)));
  }

  /** Makes sure `key` is in the directory before it signs anything. */
  async ensure(key: ScheduledKey): Promise<void> {
    if (this.published.get(key.keyId) !== JSON.stringify(recordOf(key))) await this.sync();
    if (this.published.get(key.keyId) === undefined) throw new Error('the signing key is not in the key directory');
  }

  /** Publishes what is missing; one run at a time. */
  sync(): Promise<void> {
    if (this.syncing !== undefined) return this.syncing;
    const run = this.publishMissing().finally(() => {
      if (this.syncing === run) this.syncing = undefined;
    });
    this.syncing = run;
    return run;
  }

  /**
   * Reads the directory: a key of ours that was published and is gone (revoked elsewhere) is
   * dropped from the ring, which then signs with another one.
   */
  async checkRevocations(signal?: AbortSignal): Promise<void> {
    // Only a key acknowledged before this read was proposed must be in its answer (the log orders
    // them); one acknowledged while the read was on its way may be missing without being revoked.
    const readAfter = this.acknowledgements;
    const bytes = await this.options.cluster.propose(this.entry({ type: 'signingKeyList' }, ''), true, signal);
    const { response } = decodeApplyResponse('signingKeyList', bytes);
    if (response.type !== 'signingKeyList') return;
    this.directory = response.response.keys;
    const present = new Set(response.response.keys.map((key) => key.keyId));
    const nowMs = this.options.clock.nowMs();
    for (const key of this.options.ring.published()) {
      const acknowledged = this.acknowledgedAt.get(key.keyId);
      if (acknowledged !== undefined && acknowledged <= readAfter && !present.has(key.keyId) && key.retireAfterMs > nowMs + 1000) await this.dropRevoked(key.keyId);
    }
  }

  /**
   * The keys in force cluster-wide, for the JWKS: the directory as last read (every replica's
   * keys not yet retired) and this replica's own, by kid.
   */
  keysInForce(): SigningKeyRecord[] {
    const nowSeconds = this.options.clock.nowMs() / 1000;
    const byId = new Map<string, SigningKeyRecord>();
    for (const record of this.directory) if (record.retireAfterSeconds === 0 || record.retireAfterSeconds > nowSeconds) byId.set(record.keyId, record);
    for (const key of this.options.ring.published()) byId.set(key.keyId, recordOf(key));
    return [...byId.values()].sort((a, b) => (a.keyId < b.keyId ? -1 : 1));
  }

  /** Proposes the revocation of `keyId` as `username` (checked at apply: admin only). */
  async revoke(keyId: string, username: string, authRevision: number, signal?: AbortSignal): Promise<void> {
    await this.options.cluster.propose(this.entry({ type: 'signingKeyRevoke', request: { keyId } }, username, authRevision), false, signal);
    if (this.options.ring.published().some((key) => key.keyId === keyId)) await this.dropRevoked(keyId);
  }

  private async publishMissing(): Promise<void> {
    for (const key of this.options.ring.published()) {
      const record = recordOf(key);
      const text = JSON.stringify(record);
      if (this.published.get(key.keyId) === text) continue;
      try {
        await this.options.cluster.propose(this.entry({ type: 'signingKeyPublish', request: { key: record, nowSeconds: Math.floor(this.options.clock.nowMs() / 1000) } }, this.options.publishUser), true);
        this.published.set(key.keyId, text);
        this.acknowledgements += 1;
        if (!this.acknowledgedAt.has(key.keyId)) this.acknowledgedAt.set(key.keyId, this.acknowledgements);
        this.options.logger.info({ keyId: key.keyId, notBefore: record.notBeforeSeconds, retireAfter: record.retireAfterSeconds }, 'signing key published');
      } catch (error) {
        if (isWireError(error, 'SigningKeyRevoked')) await this.dropRevoked(key.keyId);
        else throw error;
      }
    }
    for (const keyId of [...this.published.keys()]) {
      if (this.options.ring.published().some((key) => key.keyId === keyId)) continue;
      this.published.delete(keyId);
      this.acknowledgedAt.delete(keyId);
    }
  }

  private async dropRevoked(keyId: string): Promise<void> {
    this.options.logger.warn({ keyId }, 'signing key revoked; no longer used');
    this.directory = this.directory.filter((record) => record.keyId !== keyId);
    this.published.delete(keyId);
    this.acknowledgedAt.delete(keyId);
    await this.options.ring.revoke(keyId);
  }

  private entry(operation: ApplyOperation, username: string, authRevision = 0): Uint8Array {
    // The member stamps its own request id.
    return encodeApplyRequest({ header: { id: 0n, username, authRevision }, operation });
  }
}
