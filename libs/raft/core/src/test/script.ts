// A small interpreter of scenario scripts in the style of etcd-io/raft's datadriven testdata:
// each block is a command, a line `----`, and the output the command must produce. With
// RAFT_SCRIPT_REWRITE=1 the expected outputs are replaced by the actual ones (review the diff).
//
// Commands (ids are numbers):
//   cluster <n> [key=value...]      n voters 1..n (options: checkQuorum, preVote as true/false)
//   add-node <id>                   start a node in no configuration (a member about to join)
//   campaign <id> | stabilize | tick <id> <times> | tick-all <times>
//   propose <id> <data>
//   propose-conf-change <id> [v1] [transition=auto|implicit|explicit] <change>...
//       change: v<id> voter, l<id> learner, r<id> remove, u<id> update (etcd's notation)
//   isolate <id> | cut <a> <b> | heal | restart <id> | compact <id> | transfer-leader <from> <to>
//   read-index <id> <context>
//   status                          one line per node: role, term, lead, commit, applied, configuration
//   conf-changes <id>               the membership entries <id> applied and what each produced
//   snapshots <id>                  the snapshots <id> received and applied
//   read-states <id>                ReadIndex answers <id> received (and forgets them)
//   log <id>                        type and data of <id>'s entries after its snapshot
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { decodeConfChangeEntry } from '../codec/codec';
import type { ConfChangeSingle, ConfChangeTransition } from '../confchange/conf-change';
import { ConfChangeTransition as Transition, ConfChangeType } from '../confchange/conf-change';
import { ProposalDroppedError } from '../errors';
import type { NodeId } from '../ids';
import type { ConfState } from '../types';
import { EntryType } from '../types';
import { Cluster } from './cluster';

/** One block of a script: the command line and its expected output. */
export interface ScriptBlock {
  readonly line: number;
  readonly command: string;
  readonly expected: string;
}

export function parseScript(text: string): ScriptBlock[] {
  const lines = text.split('\n');
  const blocks: ScriptBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '' || line.startsWith('#')) {
      i++;
      continue;
    }
    const start = i;
    if (lines[i + 1] !== '----') throw new Error(`line ${i + 2}: expected ---- after the command`);
    i += 2;
    const out: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '') out.push(lines[i++]!);
    blocks.push({ line: start + 1, command: line, expected: out.join('\n') });
  }
  return blocks;
}

/** Renders blocks back into a script (for rewriting). */
export function renderScript(text: string, actual: readonly string[]): string {
  const lines = text.split('\n');
  const result: string[] = [];
  let i = 0;
  let b = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '' || line.startsWith('#')) {
      result.push(line);
      i++;
      continue;
    }
    result.push(line, '----', ...actual[b++]!.split('\n'));
    i += 2;
    while (i < lines.length && lines[i]!.trim() !== '') i++;
  }
  return result.join('\n');
}

const ids = (xs: readonly NodeId[]): string => `(${xs.join(' ')})`;

/** A configuration in etcd's notation: voters=(1 2)&&(1) learners=(3) learners_next=(4) autoleave. */
export function showConf(cs: ConfState): string {
  let out = `voters=${ids(cs.voters)}`;
  if (cs.votersOutgoing.length > 0) out += `&&${ids(cs.votersOutgoing)}`;
  if (cs.learners.length > 0) out += ` learners=${ids(cs.learners)}`;
  if (cs.learnersNext.length > 0) out += ` learners_next=${ids(cs.learnersNext)}`;
  if (cs.autoLeave) out += ' autoleave';
  return out;
}

function parseChange(token: string): ConfChangeSingle {
  const kinds: Record<string, ConfChangeSingle['type']> = { v: ConfChangeType.AddNode, l: ConfChangeType.AddLearnerNode, r: ConfChangeType.RemoveNode, u: ConfChangeType.UpdateNode };
  const type = kinds[token[0]!];
  if (type === undefined || !/^\d+$/.test(token.slice(1))) throw new Error(`bad change ${token}`);
  return { type, nodeId: BigInt(token.slice(1)) };
}

/** Runs scripts against a {@link Cluster}. */
export class ScriptRunner {
  private cluster: Cluster | undefined;

  private c(): Cluster {
    if (this.cluster === undefined) throw new Error('no cluster: start with `cluster <n>`');
    return this.cluster;
  }

  /** Runs one command; returns its output. */
  run(command: string): string {
    const [verb, ...args] = command.trim().split(/\s+/);
    const id = (k: number): NodeId => BigInt(args[k]!);
    switch (verb) {
      case 'cluster': {
        const options: Record<string, boolean> = {};
        for (const kv of args.slice(1)) {
          const [k, value] = kv.split('=');
          options[k!] = value === 'true';
        }
        this.cluster = new Cluster(Number(args[0]), () => options);
        return 'ok';
      }
      case 'add-node':
        this.c().addNode(id(0));
        return 'ok';
      case 'campaign':
        this.c().raw(id(0)).campaign();
        return 'ok';
      case 'stabilize':
        return this.stabilize();
      case 'tick':
        this.c().tick(id(0), Number(args[1]));
        return 'ok';
      case 'tick-all':
        return this.observe(() => this.c().tickAll(Number(args[0])));
      case 'propose':
        return this.dropped(() => this.c().raw(id(0)).propose(utf8(args[1] ?? '')));
      case 'propose-conf-change':
        return this.proposeConfChange(id(0), args.slice(1));
      case 'isolate':
        this.c().isolate(id(0));
        return 'ok';
      case 'cut':
        this.c().cut(id(0), id(1));
        return 'ok';
      case 'heal':
        this.c().heal();
        return 'ok';
      case 'restart':
        this.c().restart(id(0));
        return 'ok';
      case 'compact': {
        const n = this.c().get(id(0));
        this.c().snapshotAndCompact(id(0), n.appliedIndex);
        return `snapshot at ${n.appliedIndex}: ${showConf(n.storage.snapshot().metadata.confState)}`;
      }
      case 'transfer-leader':
        this.c().raw(id(0)).transferLeader(id(1));
        return 'ok';
      case 'read-index':
        this.c().raw(id(0)).readIndex(utf8(args[1] ?? ''));
        return 'ok';
      case 'status':
        return this.status();
      case 'snapshots':
        return this.c().get(id(0)).snapshotsApplied.map((snap) => `index=${snap.metadata.index} ${showConf(snap.metadata.confState)}`).join('\n') || '(none)';
      case 'conf-changes':
        return this.c().get(id(0)).confChanges.map((c) => `${c.index}: ${showConf(c.confState)}`).join('\n') || '(none)';
      case 'log':
        return this.log(id(0));
      case 'read-states': {
        const n = this.c().get(id(0));
        const out = n.readStates.map((rs) => `index=${rs.index} context=${fromUtf8(rs.context)}`).join('\n') || '(none)';
        n.readStates = [];
        return out;
      }
      default:
        throw new Error(`unknown command ${verb}`);
    }
  }

  private dropped(action: () => void): string {
    try {
      action();
    } catch (error) {
      if (error instanceof ProposalDroppedError) return `dropped: ${error.reason}`;
      throw error;
    }
    return 'ok';
  }

  private proposeConfChange(id: NodeId, args: string[]): string {
    let v1 = false;
    let transition: ConfChangeTransition = Transition.Auto;
    const changes: ConfChangeSingle[] = [];
    for (const a of args) {
      if (a === 'v1') v1 = true;
      else if (a.startsWith('transition=')) transition = { auto: Transition.Auto, implicit: Transition.JointImplicit, explicit: Transition.JointExplicit }[a.slice(11)] ?? Transition.Auto;
      else changes.push(parseChange(a));
    }
    const node = this.c().raw(id);
    const context = new Uint8Array(0);
    if (v1) {
      if (changes.length !== 1) throw new Error('v1 takes exactly one change');
      return this.dropped(() => node.proposeConfChange({ ...changes[0]!, context }));
    }
    return this.dropped(() => node.proposeConfChange({ transition, changes, context }));
  }

  /** Runs `action` and reports role and configuration changes it caused. */
  private observe(action: () => void): string {
    const c = this.c();
    const before = new Map(c.ids.map((i) => [i, { role: c.raw(i).basicStatus().role, term: c.raw(i).basicStatus().term, changes: c.get(i).confChanges.length }]));
    action();
    const out: string[] = [];
    for (const i of c.ids) {
      const b = before.get(i);
      const s = c.raw(i).basicStatus();
      if (b === undefined || b.role !== s.role || b.term !== s.term) out.push(`${i}: ${s.role} term ${s.term}`);
      for (const cc of c.get(i).confChanges.slice(b?.changes ?? 0)) out.push(`${i}: applied ${cc.index}: ${showConf(cc.confState)}`);
    }
    return out.length === 0 ? 'ok' : out.join('\n');
  }

  private stabilize(): string {
    return this.observe(() => this.c().stabilize());
  }

  private status(): string {
    const c = this.c();
    return c.ids
      .map((i) => {
        const s = c.raw(i).basicStatus();
        return `${i}: ${s.role} term=${s.term} lead=${s.lead} commit=${s.commit} applied=${s.applied} ${showConf(c.raw(i).confState())}`;
      })
      .join('\n');
  }

  private log(id: NodeId): string {
    const n = this.c().get(id);
    const first = n.storage.firstIndex();
    const last = n.storage.lastIndex();
    if (last < first) return '(empty)';
    return n.storage
      .entries(first, last + 1, Number.MAX_SAFE_INTEGER)
      .map((e) => {
        if (e.type === EntryType.Normal) return `${e.index}/${e.term} ${e.data.length === 0 ? '(empty)' : fromUtf8(e.data)}`;
        const cc = decodeConfChangeEntry(e);
        const kind = e.type === EntryType.ConfChange ? 'v1' : `v2 transition=${['auto', 'implicit', 'explicit'][cc.transition]}`;
        const changes = cc.changes.map((ch) => `${'vrul'[ch.type]}${ch.nodeId}`).join(' ');
        return `${e.index}/${e.term} conf-change ${kind}${changes === '' ? ' (leave joint)' : ` ${changes}`}`;
      })
      .join('\n');
  }
}
