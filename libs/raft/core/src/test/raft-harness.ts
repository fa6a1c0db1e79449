// White-box helpers for this package's tests (raft_paper_test-style scenarios). Not exported
// from index.ts; lint treats this file as test code.
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { SeededRng } from '@ward/shared/clock';
import type { RaftConfig } from '../config';
import { resolveRaftConfig } from '../config';
import type { NodeId } from '../ids';
import type { Message } from '../message';
import { MessageType, message } from '../message';
import { MemoryStorage } from '../memory-storage';
import { Raft } from '../raft';
import { bcastAppend } from '../replication';
import type { Entry, Index, Term } from '../types';
import { EntryType, votersConfState } from '../types';

/** ids 1..n as bigints. */
export function idsBySize(n: number): NodeId[] {
  return Array.from({ length: n }, (_, i) => BigInt(i + 1));
}

/** A MemoryStorage whose membership is `voters`. */
export function storageWithVoters(voters: readonly NodeId[]): MemoryStorage {
  return new MemoryStorage(votersConfState(voters));
}

/** An entry with the given term and index (and optional data). */
export function entry(index: Index, term: Term, data = ''): Entry {
  return { term, index, type: EntryType.Normal, data: utf8(data) };
}

/** Entries at indexes 1..n with the given terms (Figure 7 style). */
export function entriesWithTerms(terms: readonly Term[]): Entry[] {
  return terms.map((term, i) => entry(i + 1, term));
}

/** A raft (not a RawNode) for white-box tests; randomness seeded from the id. */
export function newTestRaft(
  id: NodeId,
  electionTimeoutTicks: number,
  heartbeatIntervalTicks: number,
  storage: MemoryStorage,
  extra: Partial<RaftConfig> = {},
): Raft {
  return new Raft(
    resolveRaftConfig({
      id,
      storage,
      rng: new SeededRng(Number(id) * 7919 + 17),
      electionTimeoutTicks,
      heartbeatIntervalTicks,
      checkQuorum: false,
      preVote: false,
      ...extra,
    }),
  );
}

/**
 * Pretends the node's pending state was persisted: its own votes and append acknowledgements
 * are stepped, other after-append messages become sendable.
 */
export function advanceMessagesAfterAppend(r: Raft): void {
  r.flushAppends();
  for (;;) {
    const pending = r.msgsAfterAppend;
    if (pending.length === 0) return;
    r.msgsAfterAppend = [];
    for (const m of pending) {
      if (m.to === r.id) r.step(m);
      else r.msgs.push(m);
    }
  }
}

/** Everything the node wants to send (after pretending its state is persisted); clears the queue. */
export function readMessages(r: Raft): Message[] {
  advanceMessagesAfterAppend(r);
  r.flushAppends();
  const out = r.msgs;
  r.msgs = [];
  return out;
}

/** Persists the unstable tail into `storage` and returns the newly committed entries, as a caller would. */
export function persistAndApply(r: Raft, storage: MemoryStorage): Entry[] {
  const unstable = r.log.nextUnstableEntries();
  storage.append(unstable);
  r.log.acceptUnstable();
  if (unstable.length > 0) {
    const last = unstable[unstable.length - 1]!;
    r.log.stableTo(last.index, last.term);
  }
  advanceMessagesAfterAppend(r);
  const committed = r.log.nextCommittedEntries();
  if (committed.length > 0) r.appliedTo(committed[committed.length - 1]!.index, 0);
  return committed;
}

/** Term, role and lead of a raft, for compact assertions. */
export function brief(r: Raft): { term: Term; role: string; lead: NodeId } {
  return { term: r.term, role: r.role, lead: r.lead };
}

/** A message as most tests build them. */
export function msg(type: MessageType, from: NodeId, to: NodeId, fields: Parameters<typeof message>[1] = {}): Message {
  return message(type, { ...fields, from, to });
}

/** Filter decides per message: deliver it (true) or drop it (false). */
export type DeliveryFilter = (m: Message) => boolean;

/**
 * An in-memory cluster of Raft instances that delivers messages until quiet (etcd's test
 * `network`). `undefined` peers are black holes. Persistence is instantaneous.
 */
export class TestNetwork {
  readonly peers = new Map<NodeId, Raft | undefined>();
  readonly storages = new Map<NodeId, MemoryStorage>();
  private readonly dropped = new Set<string>();
  private readonly ignoredTypes = new Set<MessageType>();
  filter: DeliveryFilter | undefined = undefined;

  /** `peers[i]` is node i+1: a Raft to use, 'new' for a fresh one, or undefined for a black hole. */
  constructor(peers: readonly (Raft | 'new' | undefined)[], configure: Partial<RaftConfig> = {}) {
    const ids = idsBySize(peers.length);
    peers.forEach((p, i) => {
      const id = ids[i]!;
      if (p === 'new') {
        const storage = storageWithVoters(ids);
        this.storages.set(id, storage);
        this.peers.set(id, newTestRaft(id, 10, 1, storage, configure));
      } else {
        this.peers.set(id, p);
      }
    });
  }

  raft(id: NodeId): Raft {
    const r = this.peers.get(id);
    if (r === undefined) throw new Error(`peer ${id} is a black hole`);
    return r;
  }

  /** Delivers `msgs` and everything they cause, breadth first, until no message is left. */
  send(...msgs: Message[]): void {
    const queue = [...msgs];
    for (let guard = 0; queue.length > 0; guard++) {
      if (guard > 1_000_000) throw new Error('network did not quiesce');
      const m = queue.shift()!;
      const p = this.peers.get(m.to);
      if (p === undefined) continue;
      p.step(m);
      queue.push(...this.deliverable(readMessages(p)));
    }
  }

  private deliverable(msgs: readonly Message[]): Message[] {
    return msgs.filter((m) => {
      if (this.ignoredTypes.has(m.type)) return false;
      if (this.dropped.has(`${m.from}->${m.to}`)) return false;
      return this.filter === undefined || this.filter(m);
    });
  }

  /** Drops every message between a and b (both directions). */
  cut(a: NodeId, b: NodeId): void {
    this.dropped.add(`${a}->${b}`);
    this.dropped.add(`${b}->${a}`);
  }

  /** Drops every message to and from `id`. */
  isolate(id: NodeId): void {
    for (const other of this.peers.keys()) if (other !== id) this.cut(id, other);
  }

  /** Drops every message of this kind. */
  ignore(type: MessageType): void {
    this.ignoredTypes.add(type);
  }

  /** Delivers everything again. */
  recover(): void {
    this.dropped.clear();
    this.ignoredTypes.clear();
    this.filter = undefined;
  }

  /** Starts an election on `id` (MsgHup) and delivers. */
  campaign(id: NodeId): void {
    this.send(msg(MessageType.Hup, id, id));
  }

  /** Proposes `data` on `id` and delivers. */
  propose(id: NodeId, data = 'somedata'): void {
    this.send(msg(MessageType.Prop, id, id, { entries: [entry(0, 0, data)] }));
  }
}

/** Messages ordered by (to, type, from), for order-independent comparison. */
export function sortedMessages(msgs: readonly Message[]): Message[] {
  return [...msgs].sort((a, b) => (a.to !== b.to ? (a.to < b.to ? -1 : 1) : a.type !== b.type ? a.type - b.type : a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/** The fields tests usually compare, with entries as [index, term, data] triples. */
export function view(m: Message): Record<string, unknown> {
  return {
    type: m.type,
    from: m.from,
    to: m.to,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    commit: m.commit,
    reject: m.reject,
    rejectHint: m.rejectHint,
    entries: m.entries.map((e) => [e.index, e.term, fromUtf8(e.data)]),
  };
}

/** The acknowledgement a follower would send for a MsgApp it accepted. */
export function acceptAndReply(m: Message): Message {
  if (m.type !== MessageType.App) throw new Error(`expected MsgApp, got ${m.type}`);
  return msg(MessageType.AppResp, m.to, m.from, { term: m.term, index: m.index + m.entries.length });
}

/** Every entry of the log, from firstIndex to lastIndex. */
export function allEntries(r: Raft): Entry[] {
  const first = r.log.firstIndex();
  const last = r.log.lastIndex();
  return last < first ? [] : r.log.slice(first, last + 1, Number.MAX_SAFE_INTEGER);
}

/** [index, term] pairs of entries, for compact comparisons. */
export function ids(entries: readonly Entry[]): [Index, Term][] {
  return entries.map((e) => [e.index, e.term]);
}

/** Makes a fresh leader commit its no-op with every follower's help, then persists and applies it. */
export function commitNoopEntry(r: Raft, storage: MemoryStorage): void {
  if (r.role !== 'leader') throw new Error('commitNoopEntry needs a leader');
  bcastAppend(r);
  for (const m of readMessages(r)) {
    if (m.type === MessageType.App && m.entries.length === 1 && m.entries[0]!.data.length === 0) r.step(acceptAndReply(m));
  }
  readMessages(r);
  persistAndApply(r, storage);
}
