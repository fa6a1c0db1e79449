import type { Message } from './message';
import type { Entry, HardState, ReadState, Snapshot, SoftState } from './types';

/**
 * Everything the core asks of its caller after some input, in the order it must be handled:
 *
 * 1. persist `snapshot` (if any), then `entries` (an entry at index i replaces any persisted
 *    entry >= i), then `hardState` (if any); fsync when `mustSync` (always for a snapshot);
 * 2. send `messages` (a leader may send them before step 1 completes: thesis §10.2.1; a
 *    follower or candidate never);
 * 3. apply `snapshot` and then `committedEntries` to the state machine, in order; serve
 *    `readStates` once the applied index reaches their index;
 * 4. call `advance()`.
 *
 * Between `ready()` and `advance()` the caller may keep calling step/tick/propose.
 */
export interface Ready {
  /** Set when leader or role changed since the previous Ready. */
  readonly softState: SoftState | undefined;
  /** Set when term, vote or commit changed since the previous Ready. */
  readonly hardState: HardState | undefined;
  /** Answers to readIndex() calls. */
  readonly readStates: readonly ReadState[];
  /** New log entries to persist. */
  readonly entries: readonly Entry[];
  /** A snapshot received from the leader, to persist and apply. */
  readonly snapshot: Snapshot | undefined;
  /** Committed entries to apply (already persisted, or in `entries` of this Ready). */
  readonly committedEntries: readonly Entry[];
  /** Messages to send. */
  readonly messages: readonly Message[];
  /** True when entries, term or vote changed: the write must be fsynced before sending. */
  readonly mustSync: boolean;
}
