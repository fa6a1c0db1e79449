export { createHttpServer, cutTimedOutRequest, REQUEST_TIMEOUT_ANSWER, STREAMING_BODY, type HttpServerOptions, type Readiness } from './server';
export { cachedProbe } from './cached-probe';
