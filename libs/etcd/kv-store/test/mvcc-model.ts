// A deliberately naive reference model of etcd's MVCC key space for property tests: it keeps a
// full copy of the key space after every revision and answers every request by brute force.
// It shares no code with the store except the public types.
import type {
  Compare,
  DeleteRangeRequest,
  LeaseId,
  PutRequest,
  RangeRequest,
  RequestOp,
  SortOrder,
  TxnRequest,
} from '../src/types';

export interface ModelKV {
  readonly value: string;
  readonly create: number;
  readonly mod: number;
  readonly version: number;
  readonly lease: LeaseId;
}

export type ModelState = Map<string, ModelKV>;

export interface ModelEvent {
  readonly revision: number;
  readonly sub: number;
  readonly key: string;
  readonly kv: ModelKV | null;
}

/** Outcome of a model request: a response in plain data, or an error code. */
export type ModelResult = { readonly ok: unknown } | { readonly error: string };

export class ModelError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** Span semantics written out plainly: undefined end = single key; null = from key. */
interface ModelSpan {
  readonly start: string;
  readonly end: string | null | undefined;
}

export const bytesToString = (bytes: Uint8Array): string => String.fromCharCode(...bytes);

function spanOf(key: Uint8Array, rangeEnd: Uint8Array | undefined): ModelSpan {
  const start = bytesToString(key);
  if (rangeEnd === undefined || rangeEnd.length === 0) return { start, end: undefined };
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { start, end: null };
  return { start, end: bytesToString(rangeEnd) };
}

function inSpan(span: ModelSpan, key: string): boolean {
  if (span.end === undefined) return key === span.start;
  return key >= span.start && (span.end === null || key < span.end);
}

function sortedKeys(state: ModelState, span: ModelSpan): string[] {
  return [...state.keys()].filter((key) => inSpan(span, key)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Plain response KeyValue: strings for bytes. */
export interface PlainKV {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  version: number;
  lease: LeaseId;
}

function plainKV(key: string, kv: ModelKV): PlainKV {
  return { key, value: kv.value, createRevision: kv.create, modRevision: kv.mod, version: kv.version, lease: kv.lease };
}

export interface ModelOptions {
  readonly maxEvents: number;
  readonly knownLeases: ReadonlySet<LeaseId>;
}

export class MvccModel {
  /** states[r]: the key space at revision r (index 0 unused). */
  readonly states: ModelState[] = [new Map(), new Map()];
  readonly events: ModelEvent[] = [];
  compactRevision = -1;
  floor = 1;

  constructor(readonly options: ModelOptions) {}

  get current(): number {
    return this.states.length - 1;
  }

  private stateAt(revision: number): ModelState {
    return this.states[revision]!;
  }

  range(request: RangeRequest, working: ModelState, headerRevision: number): unknown {
    let revision = request.revision ?? 0;
    if (revision > headerRevision) throw new ModelError('ERR_KV_FUTURE_REVISION');
    if (revision <= 0) revision = headerRevision;
    if (revision < this.compactRevision) throw new ModelError('ERR_KV_COMPACTED');
    const state = revision === headerRevision ? working : this.stateAt(revision);
    const span = spanOf(request.key, request.rangeEnd);
    const keys = sortedKeys(state, span);
    if (request.countOnly === true) return { revision: headerRevision, kvs: [], more: false, count: keys.length };
    let kvs = keys.map((key) => plainKV(key, state.get(key)!));
    const within = (value: number, min: number | undefined, max: number | undefined) =>
      (min === undefined || min === 0 || value >= min) && (max === undefined || max === 0 || value <= max);
    kvs = kvs.filter(
      (kv) => within(kv.modRevision, request.minModRevision, request.maxModRevision) && within(kv.createRevision, request.minCreateRevision, request.maxCreateRevision),
    );
    const target = request.sortTarget ?? 'KEY';
    let order: SortOrder = request.sortOrder ?? 'NONE';
    if (target !== 'KEY' && order === 'NONE') order = 'ASCEND';
    if (order !== 'NONE') {
      const field = (kv: PlainKV): number | string =>
        target === 'KEY' ? kv.key : target === 'VALUE' ? kv.value : target === 'VERSION' ? kv.version : target === 'CREATE' ? kv.createRevision : kv.modRevision;
      const sign = order === 'DESCEND' ? -1 : 1;
      kvs = kvs
        .map((kv, position) => ({ kv, position }))
        .sort((x, y) => {
          const a = field(x.kv);
          const b = field(y.kv);
          return a < b ? -sign : a > b ? sign : x.position - y.position;
        })
        .map(({ kv }) => kv);
    }
    const limit = request.limit ?? 0;
    const more = limit > 0 && kvs.length > limit;
    if (more) kvs = kvs.slice(0, limit);
    if (request.keysOnly === true) {
      kvs = kvs.map((kv) => ({ ...kv, value: '' }));
    }
    return { revision: headerRevision, kvs, more, count: keys.length };
  }

  private checkPutRequest(request: PutRequest): void {
    if (request.ignoreValue === true && request.value !== undefined && request.value.length > 0) throw new ModelError('ERR_KV_VALUE_PROVIDED');
    if (request.ignoreLease === true && (request.lease ?? 0n) !== 0n) throw new ModelError('ERR_KV_LEASE_PROVIDED');
  }

  private checkPutApply(request: PutRequest, before: ModelState, deletedEarlier: ModelSpan[]): void {
    const lease = request.lease ?? 0n;
    if (lease !== 0n && !this.options.knownLeases.has(lease)) throw new ModelError('ERR_KV_LEASE_NOT_FOUND');
    if (request.ignoreValue === true || request.ignoreLease === true) {
      const key = bytesToString(request.key);
      if (!before.has(key) || deletedEarlier.some((span) => inSpan(span, key))) throw new ModelError('ERR_KV_KEY_NOT_FOUND');
    }
  }

  /** Applies a put to `working`; returns the plain response. */
  private applyPut(request: PutRequest, working: ModelState, change: ChangeLog): unknown {
    const key = bytesToString(request.key);
    const previous = working.get(key);
    const revision = this.current + 1;
    const kv: ModelKV = {
      value: request.ignoreValue === true ? previous!.value : bytesToString(request.value ?? new Uint8Array(0)),
      create: previous === undefined ? revision : previous.create,
      mod: revision,
      version: previous === undefined ? 1 : previous.version + 1,
      lease: request.ignoreLease === true ? previous!.lease : (request.lease ?? 0n),
    };
    working.set(key, kv);
    change.add(key, kv);
    const response: { revision: number; prevKv?: PlainKV } = { revision };
    if (request.prevKv === true && previous !== undefined) response.prevKv = plainKV(key, previous);
    return response;
  }

  private applyDelete(request: DeleteRangeRequest, working: ModelState, change: ChangeLog): unknown {
    const keys = sortedKeys(working, spanOf(request.key, request.rangeEnd));
    const prevKvs = request.prevKv === true ? keys.map((key) => plainKV(key, working.get(key)!)) : [];
    for (const key of keys) {
      working.delete(key);
      change.add(key, null);
    }
    return { revision: change.count > 0 ? this.current + 1 : this.current, deleted: keys.length, prevKvs };
  }

  private compareHolds(compare: Compare, state: ModelState): boolean {
    const keys = sortedKeys(state, spanOf(compare.key, compare.rangeEnd));
    const check = (kv: ModelKV | undefined): boolean => {
      let sign: number;
      switch (compare.target) {
        case 'VALUE':
          if (kv === undefined) return false;
          sign = Math.sign(kv.value < bytesToString(compare.value) ? -1 : kv.value > bytesToString(compare.value) ? 1 : 0);
          break;
        case 'VERSION':
          sign = Math.sign((kv?.version ?? 0) - compare.version);
          break;
        case 'CREATE':
          sign = Math.sign((kv?.create ?? 0) - compare.createRevision);
          break;
        case 'MOD':
          sign = Math.sign((kv?.mod ?? 0) - compare.modRevision);
          break;
        case 'LEASE': {
          const lease = kv?.lease ?? 0n;
          sign = lease < compare.lease ? -1 : lease > compare.lease ? 1 : 0;
          break;
        }
      }
      return { EQUAL: sign === 0, NOT_EQUAL: sign !== 0, GREATER: sign > 0, LESS: sign < 0 }[compare.result];
    };
    if (keys.length === 0) return check(undefined);
    return keys.every((key) => check(state.get(key)));
  }

  /** etcd's checkIntervals, with plain arrays. */
  private duplicates(ops: readonly RequestOp[]): { puts: Set<string>; dels: [string, string][] } {
    const dels: [string, string][] = [];
    const holds = (key: string) => dels.some(([start, end]) => start <= key && key < end);
    for (const op of ops) {
      if (op.type !== 'deleteRange') continue;
      const start = bytesToString(op.request.key);
      const end = op.request.rangeEnd === undefined || op.request.rangeEnd.length === 0 ? `${start}\u0000` : bytesToString(op.request.rangeEnd);
      dels.push([start, end]);
    }
    const puts = new Set<string>();
    for (const op of ops) {
      if (op.type !== 'txn') continue;
      const then = this.duplicates(op.request.success);
      const otherwise = this.duplicates(op.request.failure);
      for (const key of then.puts) {
        if (puts.has(key) || holds(key)) throw new ModelError('ERR_KV_DUPLICATE_KEY');
        puts.add(key);
      }
      for (const key of otherwise.puts) {
        if ((puts.has(key) && !then.puts.has(key)) || holds(key)) throw new ModelError('ERR_KV_DUPLICATE_KEY');
        puts.add(key);
      }
      dels.push(...then.dels, ...otherwise.dels);
    }
    for (const op of ops) {
      if (op.type !== 'put') continue;
      const key = bytesToString(op.request.key);
      if (puts.has(key) || holds(key)) throw new ModelError('ERR_KV_DUPLICATE_KEY');
      puts.add(key);
    }
    return { puts, dels };
  }

  private validateOps(ops: readonly RequestOp[]): void {
    for (const op of ops) {
      if (op.type === 'put') this.checkPutRequest(op.request);
      if (op.type === 'txn') {
        this.validateOps(op.request.success);
        this.validateOps(op.request.failure);
      }
    }
  }

  private checkTxnApply(request: TxnRequest, before: ModelState, deleted: ModelSpan[]): void {
    const ops = this.compareAll(request, before) ? request.success : request.failure;
    for (const op of ops) {
      if (op.type === 'range') {
        const revision = op.request.revision ?? 0;
        if (revision > this.current) throw new ModelError('ERR_KV_FUTURE_REVISION');
        if (revision > 0 && revision < this.compactRevision) throw new ModelError('ERR_KV_COMPACTED');
      } else if (op.type === 'put') {
        this.checkPutApply(op.request, before, deleted);
      } else if (op.type === 'deleteRange') {
        deleted.push(spanOf(op.request.key, op.request.rangeEnd));
      } else {
        this.checkTxnApply(op.request, before, deleted);
      }
    }
  }

  private compareAll(request: TxnRequest, before: ModelState): boolean {
    return request.compare.every((compare) => this.compareHolds(compare, before));
  }

  private runTxn(request: TxnRequest, before: ModelState, working: ModelState, change: ChangeLog, top: boolean): unknown {
    const succeeded = this.compareAll(request, before);
    const responses = (succeeded ? request.success : request.failure).map((op) => {
      const header = change.count > 0 ? this.current + 1 : this.current;
      switch (op.type) {
        case 'range':
          return { type: 'range', response: this.range(op.request, working, header) };
        case 'put':
          return { type: 'put', response: this.applyPut(op.request, working, change) };
        case 'deleteRange':
          return { type: 'deleteRange', response: this.applyDelete(op.request, working, change) };
        case 'txn':
          return { type: 'txn', response: this.runTxn(op.request, before, working, change, false) };
      }
    });
    return { revision: top ? (change.count > 0 ? this.current + 1 : this.current) : 0, succeeded, responses };
  }

  private commit(working: ModelState, change: ChangeLog): void {
    if (change.count === 0) return;
    const revision = this.current + 1;
    change.entries.forEach(([key, kv], sub) => this.events.push({ revision, sub, key, kv }));
    this.states.push(working);
    this.trim();
  }

  private trim(): void {
    const newest = this.current;
    for (;;) {
      const held = this.events.filter((event) => event.revision >= this.floor);
      if (held.length <= this.options.maxEvents || held[0]!.revision === newest) return;
      this.floor = held[0]!.revision + 1;
    }
  }

  /** Runs a request against the model; errors become `{ error: code }`. */
  run(request: ModelRequest): ModelResult {
    try {
      return { ok: this.dispatch(request) };
    } catch (error) {
      if (error instanceof ModelError) return { error: error.code };
      throw error;
    }
  }

  private dispatch(request: ModelRequest): unknown {
    const before = this.stateAt(this.current);
    switch (request.kind) {
      case 'range':
        return this.range(request.request, before, this.current);
      case 'put': {
        this.checkPutRequest(request.request);
        this.checkPutApply(request.request, before, []);
        const working = new Map(before);
        const change = new ChangeLog();
        const response = this.applyPut(request.request, working, change);
        this.commit(working, change);
        return response;
      }
      case 'deleteRange': {
        const working = new Map(before);
        const change = new ChangeLog();
        const response = this.applyDelete(request.request, working, change);
        this.commit(working, change);
        return response;
      }
      case 'txn': {
        this.validateOps(request.request.success);
        this.validateOps(request.request.failure);
        this.duplicates(request.request.success);
        this.duplicates(request.request.failure);
        this.checkTxnApply(request.request, before, []);
        const working = new Map(before);
        const change = new ChangeLog();
        const response = this.runTxn(request.request, before, working, change, true);
        this.commit(working, change);
        return response;
      }
      case 'compact':
        if (request.revision <= this.compactRevision) throw new ModelError('ERR_KV_COMPACTED');
        if (request.revision > this.current) throw new ModelError('ERR_KV_FUTURE_REVISION');
        this.compactRevision = request.revision;
        this.floor = Math.max(this.floor, request.revision);
        return { revision: this.current };
      case 'events':
        return this.readEvents(request);
    }
  }

  private readEvents(request: Extract<ModelRequest, { kind: 'events' }>): unknown {
    if (request.fromRevision < this.floor) throw new ModelError('ERR_KV_COMPACTED');
    const span = spanOf(request.key, request.rangeEnd);
    const out: unknown[] = [];
    let lastRevision = -1;
    for (const event of this.events) {
      if (event.revision < request.fromRevision) continue;
      if (out.length >= request.maxEvents && event.revision !== lastRevision) return { events: out, nextRevision: event.revision };
      lastRevision = event.revision;
      if (!inSpan(span, event.key)) continue;
      const kv: PlainKV =
        event.kv === null
          ? { key: event.key, value: '', createRevision: 0, modRevision: event.revision, version: 0, lease: 0n }
          : plainKV(event.key, event.kv);
      const entry: Record<string, unknown> = { type: event.kv === null ? 'DELETE' : 'PUT', kv, revision: event.revision, subRevision: event.sub };
      const creation = event.kv !== null && event.kv.version === 1;
      if (request.prevKv && !creation && event.revision - 1 >= this.compactRevision) {
        const previous = this.stateAt(event.revision - 1).get(event.key);
        if (previous !== undefined) entry['prevKv'] = plainKV(event.key, previous);
      }
      out.push(entry);
    }
    return { events: out, nextRevision: Math.max(request.fromRevision, this.current + 1) };
  }
}

class ChangeLog {
  readonly entries: [string, ModelKV | null][] = [];
  add(key: string, kv: ModelKV | null): void {
    this.entries.push([key, kv]);
  }
  get count(): number {
    return this.entries.length;
  }
}

export type ModelRequest =
  | { readonly kind: 'range'; readonly request: RangeRequest }
  | { readonly kind: 'put'; readonly request: PutRequest }
  | { readonly kind: 'deleteRange'; readonly request: DeleteRangeRequest }
  | { readonly kind: 'txn'; readonly request: TxnRequest }
  | { readonly kind: 'compact'; readonly revision: number }
  | {
      readonly kind: 'events';
      readonly fromRevision: number;
      readonly key: Uint8Array;
      readonly rangeEnd?: Uint8Array;
      readonly prevKv: boolean;
      readonly maxEvents: number;
    };
