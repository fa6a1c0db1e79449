import { AuthStore, type AuthErrorCode, type AuthIdentity, type AuthStoreOptions } from '@ward/auth/permissions';
import {
  DEFAULT_EVENT_HISTORY_MAX_EVENTS,
  DEFAULT_MAX_TXN_OPS,
  DEFAULT_MAX_TXN_OPS_TOTAL,
  KVStore,
  isTxnReadOnly,
  validateDeleteRangeRequest,
  validatePutRequest,
  validateRangeRequest,
  validateTxnRequest,
  type KeySpaceDecoding,
  type KVStoreOptions,
  type LeaseId,
  type SnapshotStreamOptions,
} from '@ward/etcd/kv-store';
import type { EtcdWireError } from '@ward/etcd/wire-errors';
import { toHex } from '@ward/shared/bytes';
import { sha256 } from '@ward/shared/digest';
import { ApplierSnapshotDecoder, ApplierSnapshotTask, decodeApplierSnapshot, snapshotAroundKeySpace, type KeySpaceSection, type SnapshotAroundKeySpace, type SnapshotRestorers } from './applier-snapshot';
import { joinChunks } from '@ward/shared/binary';
import { ApplyError } from './errors';
import { SigningKeyDirectory } from './key-directory';
import { LeaseTable } from './lease-table';
import {
  checkAuthenticated,
  checkCompact,
  checkDeleteRange,
  checkLeaseAccess,
  checkLeaseKeys,
  checkLeaseList,
  checkPut,
  checkRange,
  checkTxn,
  type CheckContext,
} from './permission-checks';
import { ADMIN_OPERATIONS, type ApplyOperation, type ApplyRequest } from './request';
import type { ApplyResponse, ApplyResult } from './response';
import { SimpleTokenTable } from '@ward/auth/simple-tokens';
import { authWireError, toWireError } from './wire-error-map';

/** A lease query answered outside the log (see Applier.checkLeaseQuery). */
export type LeaseQuery =
  | { readonly type: 'keepAlive'; readonly id: LeaseId }
  | { readonly type: 'timeToLive'; readonly id: LeaseId; readonly keys: boolean }
  | { readonly type: 'leases' };

/** An Applier decoded from snapshot pieces (Applier.decoder). */
export interface ApplierDecoder {
  push(piece: Uint8Array): void;
  finish(): Applier;
  /** Where the key space's section lies in the bytes pushed, once the snapshot's head was read. */
  readonly keySpaceSection: KeySpaceSection | undefined;
}

/** Limits of the state machine. Replicas must share them: they decide outcomes. */
export interface ApplierOptions {
  /** etcd --max-txn-ops and ward's total and event-history bounds (KVStoreOptions). */
  readonly kv?: Partial<Omit<KVStoreOptions, 'leases'>>;
  readonly auth?: AuthStoreOptions;
  /** Most granted leases at once. */
  readonly maxLeases?: number;
  /** Most live simple tokens; beyond it the user holding the most loses its oldest. */
  readonly maxSimpleTokens?: number;
  /** Most live simple tokens of one user; beyond it that user's own oldest is dropped. */
  readonly maxSimpleTokensPerUser?: number;
}

export const DEFAULT_MAX_LEASES = 1_000_000;
export const DEFAULT_MAX_SIMPLE_TOKENS = 100_000;
/**
 * A user's live simple tokens: a tenth of the table, so a shared account used by thousands of
 * clients (each etcdctl run authenticates) keeps its sessions, while one user alone can still fill
 * only a tenth of the table; past the total, the user holding the most loses its oldest.
 */
export const DEFAULT_MAX_SIMPLE_TOKENS_PER_USER = 10_000;

function simpleTokenTable(options: ApplierOptions): SimpleTokenTable {
  return new SimpleTokenTable(options.maxSimpleTokens ?? DEFAULT_MAX_SIMPLE_TOKENS, options.maxSimpleTokensPerUser ?? DEFAULT_MAX_SIMPLE_TOKENS_PER_USER);
}

const NO_CHANGE: Record<string, never> = Object.freeze({}) as Record<string, never>;

interface ApplierParts {
  readonly auth: AuthStore;
  readonly kv: KVStore;
  readonly leases: LeaseTable;
  readonly tokens: SimpleTokenTable;
  readonly signingKeys: SigningKeyDirectory;
  readonly appliedIndex: number;
}

function kvOptions(options: ApplierOptions, leases: LeaseTable): KVStoreOptions {
  return {
    maxTxnOps: options.kv?.maxTxnOps ?? DEFAULT_MAX_TXN_OPS,
    maxTxnOpsTotal: options.kv?.maxTxnOpsTotal ?? DEFAULT_MAX_TXN_OPS_TOTAL,
    eventHistoryMaxEvents: options.kv?.eventHistoryMaxEvents ?? DEFAULT_EVENT_HISTORY_MAX_EVENTS,
    leases,
    ...(options.kv?.snapshotFormat === undefined ? {} : { snapshotFormat: options.kv.snapshotFormat }),
  };
}

/** What a restore fills and how (a whole snapshot or one pushed in pieces): empty tables, the auth store's restore and the key space's options. */
function restoredParts(options: ApplierOptions): Omit<SnapshotRestorers, 'restoreKv'> & { readonly kvOptions: KVStoreOptions } {
  const leases = new LeaseTable(options.maxLeases ?? DEFAULT_MAX_LEASES);
  return {
    restoreAuth: (bytes) => AuthStore.restore(bytes, options.auth),
    leases,
    tokens: simpleTokenTable(options),
    signingKeys: new SigningKeyDirectory(),
    kvOptions: kvOptions(options, leases),
  };
}

/**
 * etcd's applier chain for one replica: every committed request passes the auth checks of the
 * auth store *as of its log position*, then reaches the key space or the auth store. Pure and
 * deterministic: the same entries give byte-identical snapshots and equal state hashes everywhere.
 *
 * Refused requests are answered with etcd's wire error and change nothing but the applied index.
 */
export class Applier {
  private readonly auth: AuthStore;
  private readonly kv: KVStore;
  private readonly leases: LeaseTable;
  private readonly tokens: SimpleTokenTable;
  private readonly signingKeys: SigningKeyDirectory;
  private appliedIndexValue: number;

  private constructor(parts: ApplierParts) {
    this.auth = parts.auth;
    this.kv = parts.kv;
    this.leases = parts.leases;
    this.tokens = parts.tokens;
    this.signingKeys = parts.signingKeys;
    this.appliedIndexValue = parts.appliedIndex;
  }

  /** An empty state machine: auth off at revision 1, key space at revision 1, nothing applied. */
  static create(options: ApplierOptions = {}): Applier {
    const leases = new LeaseTable(options.maxLeases ?? DEFAULT_MAX_LEASES);
    return new Applier({
      auth: new AuthStore(options.auth),
      kv: KVStore.create(kvOptions(options, leases)),
      leases,
      tokens: simpleTokenTable(options),
      signingKeys: new SigningKeyDirectory(),
      appliedIndex: 0,
    });
  }

  /** The state machine of {@link snapshot} bytes; ERR_APPLY_SNAPSHOT_INVALID for anything else. */
  static restore(snapshot: Uint8Array, options: ApplierOptions = {}): Applier {
    const { kvOptions: kv, ...parts } = restoredParts(options);
    return new Applier(decodeApplierSnapshot(snapshot, { ...parts, restoreKv: (bytes) => KVStore.restore(bytes, kv) }));
  }

  /**
   * The state machine of {@link snapshot} bytes pushed in pieces, in order (a replica's feed: the
   * state is never joined whole); `finish` once all are in. ERR_APPLY_SNAPSHOT_INVALID for anything
   * but such bytes, from `push` or at the latest from `finish`. `checksumChecked`: the caller checks
   * a checksum of its own over the bytes before it uses the state (KVStore.decoder).
   */
  static decoder(options: ApplierOptions = {}, decoding: KeySpaceDecoding = {}): ApplierDecoder {
    const { kvOptions: kv, ...parts } = restoredParts(options);
    const decoder = new ApplierSnapshotDecoder({ ...parts, kvDecoder: (totalBytes) => KVStore.decoder(totalBytes, kv, decoding) });
    return {
      push: (piece) => decoder.push(piece),
      finish: () => new Applier(decoder.finish()),
      get keySpaceSection() {
        return decoder.keySpaceSection;
      },
    };
  }

  /** Index of the last entry applied (0 before any). */
  get appliedIndex(): number {
    return this.appliedIndexValue;
  }

  /**
   * True while the last compaction's dropped records are still being cut from the key space
   * (KVStore.compactionPending): the state answers as compacted, the host cuts them in turns with
   * `compactionStep` (CompactionTurns) so that no turn walks the whole key space.
   */
  get compactionPending(): boolean {
    return this.kv.compactionPending;
  }

  /** Cuts the chains of up to `budget` keys of that compaction; true when none is left in progress. */
  compactionStep(budget?: number): boolean {
    return this.kv.compactionStep(budget);
  }

  /**
   * Applies the entry at log `index` (which must follow the applied index: callers skip entries at
   * or below it when replaying). Never throws for a refused request; throws only for caller bugs.
   */
  apply(index: number, request: ApplyRequest): ApplyResult {
    if (!Number.isSafeInteger(index) || index <= this.appliedIndexValue) {
      throw new TypeError(`apply: index ${index} does not follow the applied index ${this.appliedIndexValue}`);
    }
    this.appliedIndexValue = index;
    return this.answer(() => this.dispatch(index, request));
  }

  /**
   * Serves a Range or a read-only Txn without a log entry (after the read barrier), with the same
   * permission checks; the state does not change. As etcd's doSerialize, a header revision that is
   * not the store's (a newer one included) discards the result: `revision of auth store is old`.
   */
  read(request: ApplyRequest): ApplyResult {
    const { operation, header } = request;
    const readOnly = operation.type === 'range' || (operation.type === 'txn' && isTxnReadOnly(operation.request));
    if (!readOnly) throw new TypeError(`read: ${operation.type} is not a read-only operation`);
    const result = this.answer(() => this.dispatchKv(this.context(request), operation));
    const stale = this.auth.enabled && header.authRevision !== 0 && header.authRevision !== this.auth.revision;
    return result.ok && stale ? { ok: false, error: authWireError('ERR_AUTH_OLD_REVISION') } : result;
  }

  /** The auth store, for reads that need no log entry (status, Authenticate's password check). */
  get authView(): Pick<AuthStore, 'enabled' | 'revision' | 'passwordCheckInput' | 'checkAccess' | 'isAdminPermitted'> {
    return this.auth;
  }

  /** The key space, for Watch and lease queries served by the node. */
  get keySpaceView(): Pick<KVStore, 'readEvents' | 'currentRevision' | 'compactRevision' | 'oldestEventRevision' | 'leaseKeys' | 'range' | 'hashKv' | 'retainedBytes' | 'snapshotBoundBytes'> {
    return this.kv;
  }

  /** The lease table, for the lessor that runs next to the state machine (deadlines, queries). */
  get leaseView(): Pick<LeaseTable, 'leaseExists' | 'ttlOf' | 'entries'> {
    return this.leases;
  }

  /**
   * The permission check of a lease query the lessor answers outside the log: `keepAlive` and
   * `timeToLive` name a lease (`keys`: the attached keys are listed too), `leases` lists them all.
   * Returns etcd's wire error, or null when allowed.
   */
  checkLeaseQuery(identity: AuthIdentity, query: LeaseQuery): EtcdWireError | null {
    const context: CheckContext = { auth: this.auth, kv: this.kv, leases: this.leases, identity };
    let code: AuthErrorCode | null;
    switch (query.type) {
      case 'keepAlive':
        code = checkLeaseAccess(context, query.id, 'write');
        break;
      case 'timeToLive':
        code = checkLeaseAccess(context, query.id, query.keys ? 'read' : 'none');
        break;
      case 'leases':
        code = checkLeaseList(context);
        break;
    }
    return code === null ? null : authWireError(code);
  }

  /** etcd's simple-token lookup: the owner and the current auth revision, or undefined. */
  resolveSimpleToken(token: string): AuthIdentity | undefined {
    if (!this.auth.enabled) return undefined;
    const owner = this.tokens.resolve(token);
    return owner === undefined ? undefined : { username: owner.username, authRevision: this.auth.revision };
  }

  /** Every live simple token, in no particular order (for the TTL keeper of a new leader). */
  simpleTokens(): IterableIterator<string> {
    return this.tokens.tokens();
  }

  /** Canonical bytes of the whole state (see applier-snapshot.ts). */
  snapshot(): Uint8Array {
    return joinChunks(this.snapshotChunks());
  }

  /** The same bytes as `snapshot()`, as chunks in order, without joining them (large states). */
  snapshotChunks(): Uint8Array[] {
    const task = this.snapshotTask();
    while (task.step(Number.MAX_SAFE_INTEGER) === 'more');
    return task.chunks;
  }

  /**
   * The same bytes, of the state as it is now, taken in steps between which entries may go on
   * being applied (ApplierSnapshotTask). A task goes stale when a compaction is applied before it
   * is done; one made before a restore must be dropped.
   */
  snapshotTask(stream?: SnapshotStreamOptions): ApplierSnapshotTask {
    return new ApplierSnapshotTask(this.appliedIndexValue, this.auth, this.kv, this.leases, this.tokens, this.signingKeys, stream);
  }

  /**
   * The snapshot's bytes before and after its key-space section, for a key space of `kvBytes`
   * (see snapshotAroundKeySpace): with the key space's canonical bytes between them, `snapshot()`.
   */
  snapshotAroundKeySpace(kvBytes: number): SnapshotAroundKeySpace {
    return snapshotAroundKeySpace({ auth: this.auth, leases: this.leases, tokens: this.tokens, signingKeys: this.signingKeys, appliedIndex: this.appliedIndexValue }, kvBytes);
  }

  /** SHA-256 of the snapshot, in hex: equal on replicas that applied the same entries. */
  stateHash(): string {
    return toHex(sha256(this.snapshot()));
  }

  // ---- dispatch ----------------------------------------------------------------------------

  private answer(run: () => ApplyResponse): ApplyResult {
    try {
      const result = run();
      return { ok: true, header: { revision: this.kv.currentRevision }, result };
    } catch (error) {
      return { ok: false, error: toWireError(error) };
    }
  }

  private context(request: ApplyRequest): CheckContext {
    const identity = { username: request.header.username, authRevision: request.header.authRevision };
    return { auth: this.auth, kv: this.kv, leases: this.leases, identity };
  }

  private dispatch(index: number, request: ApplyRequest): ApplyResponse {
    const { operation } = request;
    const context = this.context(request);
    if (ADMIN_OPERATIONS.has(operation.type)) refuse(this.auth.isAdminPermitted(context.identity.username));
    switch (operation.type) {
      case 'range':
      case 'put':
      case 'deleteRange':
      case 'txn':
      case 'compact':
      case 'leaseGrant':
      case 'leaseRevoke':
        return this.dispatchKv(context, operation);
      default:
        return this.dispatchAuth(index, context, operation);
    }
  }

  private dispatchKv(context: CheckContext, operation: ApplyOperation): ApplyResponse {
    switch (operation.type) {
      case 'range':
        validateRangeRequest(operation.request);
        refuse(checkRange(context, operation.request));
        return { type: 'range', response: this.kv.range(operation.request) };
      case 'put':
        validatePutRequest(operation.request);
        refuse(checkPut(context, operation.request));
        return { type: 'put', response: this.kv.put(operation.request) };
      case 'deleteRange':
        validateDeleteRangeRequest(operation.request);
        refuse(checkDeleteRange(context, operation.request));
        return { type: 'deleteRange', response: this.kv.deleteRange(operation.request) };
      case 'txn':
        validateTxnRequest(operation.request, this.kv.options);
        refuse(checkTxn(context, operation.request));
        return { type: 'txn', response: this.kv.txnValidated(operation.request) };
      default:
        return this.dispatchMaintenance(context, operation);
    }
  }

  private dispatchMaintenance(context: CheckContext, operation: ApplyOperation): ApplyResponse {
    switch (operation.type) {
      case 'compact':
        refuse(checkCompact(context));
        return { type: 'compact', response: this.kv.compact(operation.request.revision) };
      case 'leaseGrant':
        refuse(checkAuthenticated(context));
        this.leases.grant(operation.request.id, operation.request.ttlSeconds);
        return { type: 'leaseGrant', response: { id: operation.request.id, ttlSeconds: operation.request.ttlSeconds } };
      case 'leaseRevoke': {
        const { id } = operation.request;
        refuse(checkAuthenticated(context));
        refuse(checkLeaseKeys(context, id));
        if (!this.leases.leaseExists(id)) throw new ApplyError('ERR_APPLY_LEASE_NOT_FOUND', 'requested lease not found', { lease: id });
        if (this.kv.leaseKeyCount(id) > 0) this.kv.revokeLeaseKeys(id);
        this.leases.revoke(id);
        return { type: 'leaseRevoke', response: NO_CHANGE };
      }
      default:
        throw new TypeError(`not a key-space operation: ${operation.type}`);
    }
  }

  private dispatchAuth(index: number, context: CheckContext, operation: ApplyOperation): ApplyResponse {
    const auth = this.auth;
    switch (operation.type) {
      case 'authEnable':
        auth.authEnable();
        return { type: operation.type, response: NO_CHANGE };
      case 'authDisable':
        auth.authDisable();
        this.tokens.clear();
        return { type: operation.type, response: NO_CHANGE };
      case 'authStatus':
        return { type: 'authStatus', response: { enabled: auth.enabled, authRevision: auth.revision } };
      case 'authenticate': {
        auth.authenticate(operation.request.name);
        // The password was checked at the header's revision (0: unchecked). A change ordered
        // since then (password, user, roles) refuses the assignment; the gateway checks again.
        const checkedAt = context.identity.authRevision;
        if (checkedAt !== 0 && checkedAt < auth.revision) refuse('ERR_AUTH_OLD_REVISION');
        const token = this.tokens.assign(operation.request.simpleTokenPrefix, index, operation.request.name);
        return { type: 'authenticate', response: { token } };
      }
      case 'simpleTokenExpire':
        this.tokens.expire(operation.request.tokens);
        return { type: operation.type, response: NO_CHANGE };
      case 'signingKeyPublish':
        this.signingKeys.publish(operation.request.key, operation.request.nowSeconds);
        return { type: operation.type, response: NO_CHANGE };
      case 'signingKeyRevoke':
        this.signingKeys.revoke(operation.request.keyId);
        // Every token issued so far carries an older revision: refused as stale from here on.
        auth.invalidateTokens();
        return { type: operation.type, response: NO_CHANGE };
      case 'signingKeyList':
        return { type: 'signingKeyList', response: { keys: this.signingKeys.list(), authRevision: auth.revision } };
      default:
        return this.dispatchUsers(context, operation);
    }
  }

  private dispatchUsers(context: CheckContext, operation: ApplyOperation): ApplyResponse {
    const auth = this.auth;
    switch (operation.type) {
      case 'userAdd': {
        const { name, passwordHash, noPassword } = operation.request;
        auth.userAdd({ name, passwordHash: passwordHash ?? new Uint8Array(0), noPassword });
        return { type: operation.type, response: NO_CHANGE };
      }
      case 'userDelete':
        auth.userDelete(operation.request.name);
        this.tokens.invalidateUser(operation.request.name);
        return { type: operation.type, response: NO_CHANGE };
      case 'userChangePassword':
        auth.userChangePassword(operation.request.name, operation.request.passwordHash ?? new Uint8Array(0));
        this.tokens.invalidateUser(operation.request.name);
        return { type: operation.type, response: NO_CHANGE };
      case 'userGrantRole':
        auth.userGrantRole(operation.request.user, operation.request.role);
        return { type: operation.type, response: NO_CHANGE };
      case 'userRevokeRole':
        auth.userRevokeRole(operation.request.name, operation.request.role);
        return { type: operation.type, response: NO_CHANGE };
      case 'userGet':
        refuse(auth.checkUserGet(context.identity.username, operation.request.name));
        return { type: 'userGet', response: { roles: auth.userGet(operation.request.name) } };
      case 'userList':
        return { type: 'userList', response: { users: auth.userList() } };
      default:
        return this.dispatchRoles(context, operation);
    }
  }

  private dispatchRoles(context: CheckContext, operation: ApplyOperation): ApplyResponse {
    const auth = this.auth;
    switch (operation.type) {
      case 'roleAdd':
        auth.roleAdd(operation.request.name);
        return { type: operation.type, response: NO_CHANGE };
      case 'roleDelete':
        auth.roleDelete(operation.request.role);
        return { type: operation.type, response: NO_CHANGE };
      case 'roleGet':
        refuse(auth.checkRoleGet(context.identity.username, operation.request.role));
        return { type: 'roleGet', response: { perm: auth.roleGet(operation.request.role) } };
      case 'roleList':
        return { type: 'roleList', response: { roles: auth.roleList() } };
      case 'roleGrantPermission':
        auth.roleGrantPermission(operation.request.name, operation.request.perm);
        return { type: operation.type, response: NO_CHANGE };
      case 'roleRevokePermission':
        auth.roleRevokePermission(operation.request.role, operation.request.key, operation.request.rangeEnd);
        return { type: operation.type, response: NO_CHANGE };
      default:
        throw new TypeError(`unknown operation ${String((operation as { type: unknown }).type)}`);
    }
  }
}

/** Throws the wire error for a failed check. */
function refuse(code: AuthErrorCode | null): void {
  if (code !== null) throw authWireError(code);
}
