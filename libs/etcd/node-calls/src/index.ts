export { backoffDelayMs, sleep, type RetryBounds } from './backoff';
export { nodeWireError, readAttempt, readErrorAttempt, writeAttempt, type Attempt } from './node-answers';
export { EXCHANGE_FRAMES, exchangeCodecs, type ExchangeCodecs } from './exchange-frames';
