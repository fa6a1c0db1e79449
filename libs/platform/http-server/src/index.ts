export { createHttpServer, type HttpServerOptions } from './server';
export { cachedProbe } from './cached-probe';
