import { fromUtf8, utf8 } from '@ward/shared/bytes';

/** What a CAS compares: the current value (null = absent) or the key's version. */
export type CasCompare = { readonly value: string | null } | { readonly version: number };

/** A write command carried in a log entry; (client, seq) identifies it for deduplication. */
export type KvCommand =
  | { readonly client: number; readonly seq: number; readonly op: 'put'; readonly key: string; readonly value: string }
  | { readonly client: number; readonly seq: number; readonly op: 'cas'; readonly key: string; readonly compare: CasCompare; readonly value: string };

/** What applying a command produced (undefined: a duplicate, skipped). */
export type KvApplyResult = { readonly kind: 'put' } | { readonly kind: 'cas'; readonly succeeded: boolean };

export interface KvValue {
  readonly value: string | null;
  readonly version: number;
}

const ABSENT: KvValue = { value: null, version: 0 };
const SEP = '\u001f';

/** Entry data of a command (UTF-8 of unit-separator-joined fields). */
export function encodeCommand(cmd: KvCommand): Uint8Array {
  const compare = cmd.op === 'cas' ? ('version' in cmd.compare ? `v${cmd.compare.version}` : cmd.compare.value === null ? 'n' : `s${cmd.compare.value}`) : '';
  return utf8([cmd.client, cmd.seq, cmd.op, cmd.key, cmd.value, compare].join(SEP));
}

/** The command in entry data; throws on data that is not one (a harness bug). */
export function decodeCommand(data: Uint8Array): KvCommand {
  const [client, seq, op, key, value, compare] = fromUtf8(data).split(SEP);
  if (key === undefined || value === undefined || compare === undefined) throw new Error('not a kv command');
  const base = { client: Number(client), seq: Number(seq), key, value };
  if (op === 'put') return { ...base, op: 'put' };
  if (op !== 'cas') throw new Error(`unknown kv op ${op}`);
  const cmp: CasCompare = compare[0] === 'v' ? { version: Number(compare.slice(1)) } : compare === 'n' ? { value: null } : { value: compare.slice(1) };
  return { ...base, op: 'cas', compare: cmp };
}

/**
 * The replicated state machine of the simulation: string keys with etcd-style versions, and
 * per-client deduplication (a command applies once even if the log holds it twice, as a
 * duplicated or retried proposal would).
 */
export class KvStateMachine {
  private readonly data = new Map<string, KvValue>();
  private readonly lastSeq = new Map<number, number>();

  get(key: string): KvValue {
    return this.data.get(key) ?? ABSENT;
  }

  apply(cmd: KvCommand): KvApplyResult | undefined {
    const last = this.lastSeq.get(cmd.client) ?? -1;
    if (cmd.seq <= last) return undefined;
    this.lastSeq.set(cmd.client, cmd.seq);
    const current = this.get(cmd.key);
    if (cmd.op === 'put') {
      this.data.set(cmd.key, { value: cmd.value, version: current.version + 1 });
      return { kind: 'put' };
    }
    const holds = 'version' in cmd.compare ? current.version === cmd.compare.version : current.value === cmd.compare.value;
    if (holds) this.data.set(cmd.key, { value: cmd.value, version: current.version + 1 });
    return { kind: 'cas', succeeded: holds };
  }

  /** A canonical serialisation (sorted), used as snapshot data. */
  snapshot(): Uint8Array {
    const keys = [...this.data.keys()].sort();
    const clients = [...this.lastSeq.keys()].sort((a, b) => a - b);
    return utf8(JSON.stringify({ kv: keys.map((k) => [k, this.data.get(k)!.value, this.data.get(k)!.version]), seq: clients.map((c) => [c, this.lastSeq.get(c)]) }));
  }

  static restore(bytes: Uint8Array): KvStateMachine {
    const sm = new KvStateMachine();
    if (bytes.length === 0) return sm;
    const parsed = JSON.parse(fromUtf8(bytes)) as { kv: [string, string | null, number][]; seq: [number, number][] };
    for (const [k, value, version] of parsed.kv) sm.data.set(k, { value, version });
    for (const [c, s] of parsed.seq) sm.lastSeq.set(c, s);
    return sm;
  }

  /** A hash of the whole state, for convergence checks. */
  stateHash(): string {
    return fromUtf8(this.snapshot());
  }
}
