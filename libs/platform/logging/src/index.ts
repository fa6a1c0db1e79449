export { createLogger, type CreateLoggerOptions, type LogLevel, type Logger } from './logger';
export { REDACTED, REDACTED_FIELDS, isRedactedField, scrub, scrubString } from './redaction';
export { createTracer, type Tracer } from './tracer';
export {
  DEFAULT_ERROR_LOG_LIMITS,
  ErrorLogLimiter,
  OVERFLOW_CAUSE,
  errorCause,
  unexpectedErrorLog,
  type ErrorLogDecision,
  type ErrorLogLimits,
  type UnexpectedErrorLog,
} from './error-log-limiter';
