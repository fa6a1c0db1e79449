export { createHttpServer, cutTimedOutRequest, REQUEST_TIMEOUT_ANSWER, STREAMING_BODY, type HttpServerOptions } from './server';
export { cachedProbe } from './cached-probe';
