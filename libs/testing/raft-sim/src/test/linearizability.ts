// Plugs the real linearizability checker into simulator runs (test code may import it).
import { checkLinearizability, kvModel } from '@ward/testing/linearizability';
import type { HistoryChecker } from '../history';

/** Search budget per history: generous; running out yields 'unknown', which fails a test. */
export const HISTORY_MAX_STEPS = 50_000_000;

/** Checks a simulator history against the per-key KV model. */
export const checkKvHistory: HistoryChecker = (history) => {
  const result = checkLinearizability(kvModel, history, { budget: { maxSteps: HISTORY_MAX_STEPS } });
  const detail = result.illegal === undefined ? undefined : `key ${result.illegal.partitionKey}, blocked at operation ${result.illegal.blockedOperation}`;
  return { verdict: result.verdict, detail };
};
