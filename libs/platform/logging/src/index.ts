export { createLogger, type CreateLoggerOptions, type LogLevel, type Logger } from './logger';
export { REDACTED, REDACTED_FIELDS, isRedactedField, scrub, scrubString } from './redaction';
export { createTracer, type Tracer } from './tracer';
