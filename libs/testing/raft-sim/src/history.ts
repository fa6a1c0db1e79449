/**
 * The client history the simulator records, in the shape of @ward/testing/linearizability's
 * `Operation<KvInput, KvOutput>` (structurally identical, so histories go to its `kvModel` as
 * they are). Declared here because library code of one testing project may not import another;
 * tests and scripts plug the checker in through `RunOptions.checkHistory`.
 */
export type SimKvInput =
  | { readonly kind: 'get'; readonly key: string }
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'cas'; readonly key: string; readonly compare: { readonly value: string | null } | { readonly version: number }; readonly value: string };

export type SimKvOutput =
  | { readonly kind: 'get'; readonly value: string | null; readonly version?: number }
  | { readonly kind: 'put' }
  | { readonly kind: 'cas'; readonly succeeded: boolean };

interface OperationBase {
  readonly clientId: number;
  readonly input: SimKvInput;
  readonly callTime: number;
}

/** One recorded operation: seen (`ok`), outcome unknown (open-ended), or definitely without effect. */
export type SimOperation =
  | (OperationBase & { readonly status: 'ok'; readonly output: SimKvOutput; readonly returnTime: number })
  | (OperationBase & { readonly status: 'unknown'; readonly returnTime?: number })
  | (OperationBase & { readonly status: 'failed'; readonly returnTime?: number });

/** A linearizability verdict: `unknown` (budget exhausted) is never a pass. */
export type HistoryVerdict = 'ok' | 'illegal' | 'unknown';

/** Decides whether a recorded history is linearizable (tests pass the real checker). */
export type HistoryChecker = (history: readonly SimOperation[]) => { readonly verdict: HistoryVerdict; readonly detail?: string };
