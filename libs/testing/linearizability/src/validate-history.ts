import { InvalidHistoryError } from './errors';
import type { Operation } from './types';

/** Default limit on the operations of one history. */
export const DEFAULT_MAX_OPERATIONS = 1_000_000;

function checkTime(index: number, name: string, time: unknown): void {
  if (typeof time !== 'number' || !Number.isFinite(time)) {
    throw new InvalidHistoryError(index, 'bad-time', `operation ${index}: ${name} must be a finite number`);
  }
}

/** Rejects a malformed history (a recorder bug) before any search, with a coded error. */
export function validateHistory(history: readonly Operation<unknown, unknown>[], maxOperations: number): void {
  if (!Array.isArray(history)) throw new TypeError('history must be an array of operations');
  if (history.length > maxOperations) {
    throw new InvalidHistoryError(
      -1,
      'too-many-operations',
      `history has ${history.length} operations, more than the limit of ${maxOperations}`,
    );
  }
  history.forEach((operation, index) => {
    if (operation === null || typeof operation !== 'object') {
      throw new InvalidHistoryError(index, 'bad-status', `operation ${index} is not an object`);
    }
    if (!Number.isSafeInteger(operation.clientId)) {
      throw new InvalidHistoryError(index, 'bad-client', `operation ${index}: clientId must be an integer`);
    }
    checkTime(index, 'callTime', operation.callTime);
    switch (operation.status) {
      case 'ok':
        checkTime(index, 'returnTime', operation.returnTime);
        if (operation.returnTime < operation.callTime) {
          throw new InvalidHistoryError(index, 'return-before-call', `operation ${index}: returnTime is before callTime`);
        }
        return;
      case 'unknown':
      case 'failed':
        if (operation.returnTime !== undefined) checkTime(index, 'returnTime', operation.returnTime);
        return;
      default:
        throw new InvalidHistoryError(
          index,
          'bad-status',
          `operation ${index}: status must be 'ok', 'unknown' or 'failed'`,
        );
    }
  });
}
