export { backoffDelayMs, sleep, type RetryBounds } from './backoff';
export { nodeWireError, readAttempt, readErrorAttempt, writeAttempt, type Attempt } from './node-answers';
export {
  EXCHANGE_ALIVE_INTERVAL_MS,
  EXCHANGE_FRAMES,
  EXCHANGE_SILENCE_LIMIT_MS,
  NODE_MAX_MESSAGE_BYTES,
  exchangeCodecs,
  type ExchangeCodecs,
} from './exchange-frames';
