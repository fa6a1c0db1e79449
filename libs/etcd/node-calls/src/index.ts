export { backoffDelayMs, sleep, type RetryBounds } from './backoff';
export { nodeWireError, readAttempt, readErrorAttempt, writeAttempt, type Attempt } from './node-answers';
export {
  EXCHANGE_ALPN,
  EXCHANGE_PREFACE,
  ExchangeConnection,
  ExchangeSocket,
  type ExchangeKeepalive,
  type ExchangeSocketOptions,
  type ServeExchangeSocketOptions,
} from './exchange-socket';
