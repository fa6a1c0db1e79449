// Turning a raft-node's answer into what the retry loop does next.
import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { isGrpcStatusCode, wireError, wireErrorNameByMessage, type EtcdWireError } from '@ward/etcd/wire-errors';
import type { NodeResponse__Output, WireError__Output } from '@ward/etcd/proto';

/** What one try produced. */
export type Attempt<T> =
  | { readonly kind: 'done'; readonly value: T }
  /** A follower answered: the leader is elsewhere (address empty when unknown). Nothing was proposed. */
  | { readonly kind: 'redirect'; readonly leaderAddress: string }
  /** Nothing happened on the node (not sent, or refused before proposing): safe to try again. */
  | { readonly kind: 'retry'; readonly error: Error }
  /** The final answer for the client. */
  | { readonly kind: 'fail'; readonly error: Error };

/** A node's WireError as a throwable carrying etcd's exact code and text. */
export function nodeWireError(error: WireError__Output | null | undefined): EtcdWireError | GrpcStatusError {
  const message = error?.message ?? '';
  const name = wireErrorNameByMessage(message);
  if (name !== undefined) return wireError(name);
  const code = error?.code ?? Status.UNKNOWN;
  // A text outside the catalogue passes through with its code (never a code out of range).
  return new GrpcStatusError(isGrpcStatusCode(code) && code !== 0 ? code : Status.UNKNOWN, message);
}

/** A node's error answer to an idempotent request: retried when the node was unavailable. */
export function readErrorAttempt(answer: WireError__Output | null | undefined): Attempt<never> {
  const error = nodeWireError(answer);
  return (error as { grpcCode?: number }).grpcCode === Status.UNAVAILABLE ? { kind: 'retry', error } : { kind: 'fail', error };
}

/** A node's answer as an attempt: a response is done, a NotLeader a redirect, an error as `onError` says. */
function attemptOf(response: NodeResponse__Output, onError: (error: WireError__Output | null | undefined) => Attempt<never>): Attempt<Buffer> {
  switch (response.result) {
    case 'response':
      return { kind: 'done', value: response.response ?? Buffer.alloc(0) };
    case 'not_leader':
      return { kind: 'redirect', leaderAddress: response.not_leader?.leader_address ?? '' };
    default:
      return onError(response.error);
  }
}

/**
 * A Propose answer. Only a NotLeader, or `etcdserver: no leader` (refused before proposing), may
 * be retried: anything else is the outcome, and a write is never silently proposed twice.
 */
export function writeAttempt(response: NodeResponse__Output): Attempt<Buffer> {
  return attemptOf(response, (answer) => {
    const error = nodeWireError(answer);
    return wireErrorNameByMessage(error.message) === 'NoLeader' ? { kind: 'retry', error } : { kind: 'fail', error };
  });
}

/** A Read answer: reads are idempotent, so any "unavailable" answer is retried. */
export function readAttempt(response: NodeResponse__Output): Attempt<Buffer> {
  return attemptOf(response, readErrorAttempt);
}
