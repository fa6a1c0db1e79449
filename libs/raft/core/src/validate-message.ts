import { MessageInvalidError } from './errors';
import { MAX_NODE_ID } from './ids';
import type { Message } from './message';
import { MessageType, isMessageType } from './message';
import type { ConfState, Entry, Snapshot } from './types';
import { EntryType } from './types';

function position(field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new MessageInvalidError(field, `must be a non-negative safe integer, got ${String(value)}`);
  }
}

function nodeIdOrNone(field: string, value: unknown): void {
  if (typeof value !== 'bigint' || value < 0n || value > MAX_NODE_ID) throw new MessageInvalidError(field, 'must be a uint64 bigint');
}

function bytes(field: string, value: unknown): void {
  if (!(value instanceof Uint8Array)) throw new MessageInvalidError(field, 'must be a Uint8Array');
}

function validateEntry(field: string, e: Entry): void {
  if (typeof e !== 'object' || e === null) throw new MessageInvalidError(field, 'must be an entry');
  position(`${field}.term`, e.term);
  position(`${field}.index`, e.index);
  if (e.type !== EntryType.Normal && e.type !== EntryType.ConfChange && e.type !== EntryType.ConfChangeV2) {
    throw new MessageInvalidError(`${field}.type`, `unknown entry type ${String(e.type)}`);
  }
  bytes(`${field}.data`, e.data);
}

function isPlainValidEntry(e: Entry): boolean {
  return (
    typeof e === 'object' &&
    e !== null &&
    Number.isSafeInteger(e.term) &&
    e.term >= 0 &&
    Number.isSafeInteger(e.index) &&
    e.index >= 0 &&
    (e.type === 0 || e.type === 1 || e.type === 2) &&
    e.data instanceof Uint8Array
  );
}

function validateIds(field: string, ids: unknown): void {
  if (!Array.isArray(ids)) throw new MessageInvalidError(field, 'must be an array');
  ids.forEach((id, i) => nodeIdOrNone(`${field}[${i}]`, id));
}

function validateConfState(field: string, cs: ConfState): void {
  if (typeof cs !== 'object' || cs === null) throw new MessageInvalidError(field, 'must be a ConfState');
  validateIds(`${field}.voters`, cs.voters);
  validateIds(`${field}.learners`, cs.learners);
  validateIds(`${field}.votersOutgoing`, cs.votersOutgoing);
  validateIds(`${field}.learnersNext`, cs.learnersNext);
  if (typeof cs.autoLeave !== 'boolean') throw new MessageInvalidError(`${field}.autoLeave`, 'must be a boolean');
}

function validateSnapshot(s: Snapshot): void {
  if (typeof s !== 'object' || s === null || typeof s.metadata !== 'object' || s.metadata === null) {
    throw new MessageInvalidError('snapshot', 'must be a Snapshot');
  }
  bytes('snapshot.data', s.data);
  position('snapshot.metadata.index', s.metadata.index);
  position('snapshot.metadata.term', s.metadata.term);
  validateConfState('snapshot.metadata.confState', s.metadata.confState);
}

/**
 * Checks a message from the network before it reaches the state machine: field types and
 * ranges, and the shape MsgApp entries must have (contiguous after `index`, terms not above the
 * message's). Throws MessageInvalidError; nothing has been changed when it does.
 */
export function validateMessage(m: Message): void {
  if (typeof m !== 'object' || m === null) throw new MessageInvalidError('message', 'must be an object');
  if (typeof m.type !== 'number' || !isMessageType(m.type)) throw new MessageInvalidError('type', `unknown message type ${String(m.type)}`);
  nodeIdOrNone('to', m.to);
  nodeIdOrNone('from', m.from);
  position('term', m.term);
  position('logTerm', m.logTerm);
  position('index', m.index);
  position('commit', m.commit);
  position('rejectHint', m.rejectHint);
  if (typeof m.reject !== 'boolean') throw new MessageInvalidError('reject', 'must be a boolean');
  bytes('context', m.context);
  if (!Array.isArray(m.entries)) throw new MessageInvalidError('entries', 'must be an array');
  for (let i = 0; i < m.entries.length; i++) {
    const e = m.entries[i]!;
    // Fast path without building field names; the slow path names the bad field.
    if (!isPlainValidEntry(e)) validateEntry(`entries[${i}]`, e);
  }
  if (m.snapshot !== undefined) validateSnapshot(m.snapshot);
  if (m.type === MessageType.App) validateAppend(m);
  if (m.type === MessageType.Snap && m.snapshot === undefined) throw new MessageInvalidError('snapshot', 'MsgSnap needs a snapshot');
}

function validateAppend(m: Message): void {
  let previousTerm = m.logTerm;
  for (let i = 0; i < m.entries.length; i++) {
    const e = m.entries[i]!;
    if (e.term < previousTerm) throw new MessageInvalidError(`entries[${i}].term`, `terms must not decrease (${e.term} after ${previousTerm})`);
    if (e.index !== m.index + 1 + i) throw new MessageInvalidError(`entries[${i}].index`, `expected ${m.index + 1 + i}, got ${e.index}`);
    if (e.term > m.term) throw new MessageInvalidError(`entries[${i}].term`, `entry term ${e.term} above message term ${m.term}`);
    previousTerm = e.term;
  }
  if (m.logTerm > m.term) throw new MessageInvalidError('logTerm', `above message term ${m.term}`);
}
